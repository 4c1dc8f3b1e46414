// `binrelay tail` on rows events larger than one 16 MiB protocol packet: the
// event arrives split over several packets and must be reassembled exactly.
#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/harness/binrelay_process.h"
#include "tests/harness/json_lite.h"
#include "tests/harness/server_sandbox.h"
#include "tests/harness/status_matchers.h"

namespace binrelay::testing {
namespace {

constexpr char kUser[] = "relay";
constexpr char kPassword[] = "large-pw";
constexpr size_t kBlobSize = 20u << 20;  // 20 MiB: one event over 16 MiB

// Deterministic, incompressible-looking bytes (fixed seed: failures replay).
std::string MakeBlob() {
  std::mt19937_64 rng(20240229);
  std::string out(kBlobSize, '\0');
  for (size_t i = 0; i < out.size(); i += 8) {
    uint64_t v = rng();
    for (size_t j = 0; j < 8 && i + j < out.size(); ++j) out[i + j] = static_cast<char>(v >> (8 * j));
  }
  return out;
}

std::string Sha256Hex(const std::string& data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  std::string hex = ToHex(std::string(reinterpret_cast<char*>(digest), sizeof(digest)));
  for (char& c : hex) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return hex;
}

// Describes how `got` differs from `want` (size, first differing offset), or "".
std::string BlobDiff(const std::string& got, const std::string& want) {
  if (got == want) return "";
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  return absl::StrCat("decoded ", got.size(), " bytes, inserted ", want.size(),
                      " bytes; first difference at offset ", i);
}

// Text of line.key, or of line.image.key; "<missing>" if absent.
std::string Field(const JsonValue& line, const char* key, const char* image = nullptr) {
  const JsonValue* obj = image ? line.Find(image) : &line;
  const JsonValue* v = obj ? obj->Find(key) : nullptr;
  return v ? v->text : "<missing>";
}

std::string DecodedColumn(const JsonValue& line, const char* image, const char* column) {
  const JsonValue* img = line.Find(image);
  if (img == nullptr || !img->is_object()) return "<no image>";
  const JsonValue* v = img->Find(column);
  if (v == nullptr || !v->is_string()) return "<no string column>";
  absl::StatusOr<std::string> bytes = Base64Decode(v->text);
  return bytes.ok() ? *bytes : "<bad base64>";
}

// Guards: >16 MiB packet reassembly (lost, duplicated or reordered 16 MiB
// chunks) and large LONGBLOB lengths, for a 20 MiB insert and a ~40 MiB
// update event carrying both images.
TEST(TailLargeEventTest, TwentyMebibyteLongblobDecodesToExactBytes) {
  ServerSandboxOptions options;
  options.extra_args = {"--max-allowed-packet=64M"};
  BR_ASSERT_OK_AND_ASSIGN(std::unique_ptr<ServerSandbox> sb, ServerSandbox::Start(options));
  BR_ASSERT_OK(sb->CreateUser(kUser, kPassword, "REPLICATION SLAVE, BINLOG MONITOR, SELECT"));
  BR_ASSERT_OK(sb->Execute("CREATE DATABASE big"));
  BR_ASSERT_OK(sb->Execute("CREATE TABLE big.t (id INT PRIMARY KEY, b LONGBLOB)"));
  BR_ASSERT_OK_AND_ASSIGN(std::string start, CurrentBinlogPosition(*sb));

  const std::string blob = MakeBlob();
  BR_ASSERT_OK(sb->Execute(absl::StrCat("INSERT INTO big.t VALUES (1, X'", ToHex(blob), "')")));
  // The server holds exactly these bytes (else the comparison below is moot).
  BR_ASSERT_OK_AND_ASSIGN(SqlRows rows, sb->Query("SELECT LENGTH(b), SHA2(b, 256) FROM big.t"));
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(*rows[0][0], std::to_string(kBlobSize));
  ASSERT_EQ(*rows[0][1], Sha256Hex(blob));
  // FULL image: before and after both carry the blob, ~40 MiB in one event.
  BR_ASSERT_OK(sb->Execute("UPDATE big.t SET id = 2 WHERE id = 1"));

  BR_ASSERT_OK_AND_ASSIGN(
      ProcessResult r,
      RunBinrelay(TailArgs(*sb, kUser, "big.t", {"--start", start, "--until-end"}),
                  {{"BINRELAY_SOURCE_PASSWORD", kPassword}}, std::chrono::seconds(120)));
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  BR_ASSERT_OK_AND_ASSIGN(std::vector<JsonValue> lines, ParseJsonLines(r.out));
  ASSERT_EQ(lines.size(), 2u) << r.Describe();

  EXPECT_EQ(Field(lines[0], "op"), "insert");
  EXPECT_EQ(BlobDiff(DecodedColumn(lines[0], "after", "b"), blob), "") << "insert after.b";
  EXPECT_EQ(Field(lines[1], "op"), "update");
  EXPECT_EQ(Field(lines[1], "id", "before"), "1");
  EXPECT_EQ(Field(lines[1], "id", "after"), "2");
  EXPECT_EQ(BlobDiff(DecodedColumn(lines[1], "before", "b"), blob), "") << "update before.b";
  EXPECT_EQ(BlobDiff(DecodedColumn(lines[1], "after", "b"), blob), "") << "update after.b";
}

}  // namespace
}  // namespace binrelay::testing
