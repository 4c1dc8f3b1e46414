// BinlogFileBytes (binlog_file_bytes.h): how `tail --file` and the store's
// recovery scan read a whole binlog file. Guards against a small gzip file
// inflating without bound, against truncated gzip data passing as a short
// binlog, and against the plain-file path changing any byte.
#include "replication/binlog_file_bytes.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <sys/stat.h>

#include "tests/harness/status_matchers.h"
#include "tests/harness/temp_dir.h"

namespace binrelay::replication {
namespace {

class BinlogFileBytesTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTestTempDir("binlog_file_bytes"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string WriteGzip(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    gzFile gz = gzopen(path.c_str(), "wb9");
    EXPECT_NE(gz, nullptr);
    EXPECT_EQ(gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size())),
              static_cast<int>(bytes.size()));
    gzclose(gz);
    return path;
  }

  std::string dir_;
};

TEST_F(BinlogFileBytesTest, PlainFileIsReadByteForByte) {
  std::string bytes("\xfe" "bin", 4);
  for (int i = 0; i < 100000; ++i) bytes.push_back(static_cast<char>(i * 7));
  BR_ASSERT_OK_AND_ASSIGN(BinlogFileBytes f, BinlogFileBytes::Open(Write("b.000001", bytes)));
  EXPECT_EQ(f.data(), bytes);
  BinlogFileBytes moved = std::move(f);  // the view follows the mapping
  EXPECT_EQ(moved.data(), bytes);
  BR_ASSERT_OK_AND_ASSIGN(BinlogFileBytes empty, BinlogFileBytes::Open(Write("e", "")));
  EXPECT_TRUE(empty.data().empty());
}

TEST_F(BinlogFileBytesTest, GzipFileIsInflated) {
  std::string bytes(3 << 20, 'x');  // several inflate steps
  bytes[12345] = 'y';
  BR_ASSERT_OK_AND_ASSIGN(BinlogFileBytes f,
                          BinlogFileBytes::Open(WriteGzip("b.000001.gz", bytes)));
  EXPECT_EQ(f.data(), bytes);
  BinlogFileBytes moved = std::move(f);
  EXPECT_EQ(moved.data(), bytes);
}

// 64 MiB of zeros is a 64 KiB gzip file: past the limit it must stop with a
// clear error, not inflate on.
TEST_F(BinlogFileBytesTest, GzipInflatingPastTheLimitIsRefused) {
  const std::string path = WriteGzip("bomb.gz", std::string(64 << 20, '\0'));
  EXPECT_LT(std::filesystem::file_size(path), 1u << 20);
  auto f = BinlogFileBytes::Open(path, 8 << 20);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kResourceExhausted) << f.status();
  EXPECT_NE(f.status().message().find(path), std::string_view::npos) << f.status();
  EXPECT_NE(f.status().message().find("8388608 bytes"), std::string_view::npos) << f.status();
  // Exactly at the limit is fine.
  const std::string exact = WriteGzip("exact.gz", std::string(8 << 20, 'z'));
  BR_ASSERT_OK_AND_ASSIGN(BinlogFileBytes ok, BinlogFileBytes::Open(exact, 8 << 20));
  EXPECT_EQ(ok.data().size(), size_t{8} << 20);
}

TEST_F(BinlogFileBytesTest, TruncatedGzipIsDataLossAndMissingFileNotFound) {
  std::string gz;
  {
    const std::string path = WriteGzip("full.gz", std::string(1 << 20, 'q') + "tail");
    std::ifstream in(path, std::ios::binary);
    gz.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string cut = Write("cut.gz", gz.substr(0, gz.size() / 2));
  auto f = BinlogFileBytes::Open(cut);
  EXPECT_EQ(f.status().code(), absl::StatusCode::kDataLoss) << f.status();
  EXPECT_NE(f.status().message().find("cut.gz"), std::string_view::npos) << f.status();
  EXPECT_EQ(BinlogFileBytes::Open(dir_ + "/absent").status().code(), absl::StatusCode::kNotFound);
}

// A pipe has no size to map (tail --file <(zcat file.gz)); it used to read
// as empty. Guards that its bytes, gzip or not, arrive whole.
TEST_F(BinlogFileBytesTest, PipeIsReadWhole) {
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string bytes(200000, 'b');
  bytes[0] = '\xfe';
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << bytes; });
  auto f = BinlogFileBytes::Open(fifo);
  writer.join();
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->data(), bytes);
}

}  // namespace
}  // namespace binrelay::replication
