#include "protocol/bulk_execute.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/capabilities.h"

namespace binrelay::protocol {
namespace {

constexpr size_t kHeader = 1 + 4 + 2;  // command, statement id, flags (values_begin)
constexpr uint16_t kSendTypes = 128;   // STMT_BULK_FLAG_CLIENT_SEND_TYPES
constexpr char kIndicatorValue = 0;    // STMT_INDICATOR_NONE
constexpr char kIndicatorNull = 1;     // STMT_INDICATOR_NULL
constexpr uint8_t kUnsignedFlag = 0x80;

}  // namespace

void BulkExecuteBuilder::Start(uint32_t id, uint16_t params) {
  len_ = kHeader + 2 * size_t{params};
  Reserve(len_);
  char* p = buf_.data();
  p[0] = static_cast<char>(command::kStmtBulkExecute);
  for (int i = 0; i < 4; ++i) p[1 + i] = static_cast<char>(id >> (8 * i));
  p[5] = static_cast<char>(kSendTypes & 0xFF);
  p[6] = static_cast<char>(kSendTypes >> 8);
  for (uint16_t i = 0; i < params; ++i) {
    p[kHeader + 2 * size_t{i}] = static_cast<char>(ParamType::kNull);
    p[kHeader + 2 * size_t{i} + 1] = '\0';
  }
  params_ = params;
  next_ = 0;
  rows_ = 0;
  row_ends_.clear();
}

absl::Status BulkExecuteBuilder::ClaimError(ParamType type) const {
  if (next_ >= params_) {
    return absl::InternalError(absl::StrCat("bulk row has more than ", params_, " values"));
  }
  return absl::InternalError(absl::StrCat(
      "bulk parameter ", next_, " has type ",
      static_cast<uint8_t>(buf_[kHeader + 2 * size_t{next_}]), " in an earlier row and ",
      static_cast<uint8_t>(type), " now"));
}

char* BulkExecuteBuilder::Claim(ParamType type, bool is_unsigned, size_t value_bytes,
                                absl::Status* error) {
  if (next_ >= params_) {
    *error = ClaimError(type);
    return nullptr;
  }
  char* slot = buf_.data() + kHeader + 2 * size_t{next_};
  const auto want = static_cast<char>(type);
  const char flags = is_unsigned ? static_cast<char>(kUnsignedFlag) : '\0';
  if (slot[0] != want || slot[1] != flags) {
    if (slot[0] != static_cast<char>(ParamType::kNull)) {
      *error = ClaimError(type);
      return nullptr;
    }
    slot[0] = want;
    slot[1] = flags;
  }
  ++next_;
  const size_t at = len_;
  len_ += 1 + value_bytes;
  Reserve(len_);
  char* p = buf_.data() + at;
  *p = kIndicatorValue;
  return p + 1;
}

void BulkExecuteBuilder::AddNull() {
  Reserve(len_ + 1);
  buf_[len_++] = kIndicatorNull;
  ++next_;
}

namespace {
void StoreLE(char* p, uint64_t v, size_t width) {
  for (size_t i = 0; i < width; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
// Year (2 bytes), month, day: the date part of MYSQL_TIME's DATE and
// DATETIME layouts.
void PutYmd(char* p, const TemporalParts& t) {
  StoreLE(p, t.year, 2);
  p[2] = static_cast<char>(t.month);
  p[3] = static_cast<char>(t.day);
}
}  // namespace

absl::Status BulkExecuteBuilder::AddInteger(uint64_t v, bool is_unsigned) {
  absl::Status error;
  char* p = Claim(ParamType::kLongLong, is_unsigned, 8, &error);
  if (p == nullptr) return error;
  StoreLE(p, v, 8);
  return absl::OkStatus();
}

absl::Status BulkExecuteBuilder::AddDouble(double d) {
  absl::Status error;
  char* p = Claim(ParamType::kDouble, false, 8, &error);
  if (p == nullptr) return error;
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  StoreLE(p, bits, 8);  // float8store: IEEE 754, little-endian
  return absl::OkStatus();
}

absl::Status BulkExecuteBuilder::AddDate(const TemporalParts& t) {
  absl::Status error;
  char* p = Claim(ParamType::kDate, false, 5, &error);
  if (p == nullptr) return error;
  p[0] = 4;
  PutYmd(p + 1, t);
  return absl::OkStatus();
}

absl::Status BulkExecuteBuilder::AddDatetime(const TemporalParts& t) {
  absl::Status error;
  char* p = Claim(ParamType::kDatetime, false, 12, &error);
  if (p == nullptr) return error;
  char* at = p;
  at[0] = 11;
  PutYmd(at + 1, t);
  at[5] = static_cast<char>(t.hour);
  at[6] = static_cast<char>(t.minute);
  at[7] = static_cast<char>(t.second);
  StoreLE(at + 8, t.micro, 4);
  return absl::OkStatus();
}

absl::Status BulkExecuteBuilder::AddTime(const TemporalParts& t) {
  absl::Status error;
  char* p = Claim(ParamType::kTime, false, 13, &error);
  if (p == nullptr) return error;
  char* at = p;
  at[0] = 12;
  at[1] = t.negative ? 1 : 0;
  StoreLE(at + 2, t.hour / 24, 4);
  at[6] = static_cast<char>(t.hour % 24);
  at[7] = static_cast<char>(t.minute);
  at[8] = static_cast<char>(t.second);
  StoreLE(at + 9, t.micro, 4);
  return absl::OkStatus();
}

absl::Status BulkExecuteBuilder::AddLengthPrefixed(ParamType type, std::string_view bytes) {
  // The length as a length-encoded integer (byte_cursor.h AppendLenenc).
  const uint64_t n = bytes.size();
  const size_t len_bytes = n < 251 ? 1 : n < (1u << 16) ? 3 : n < (1u << 24) ? 4 : 9;
  absl::Status error;
  char* p = Claim(type, false, len_bytes, &error);
  if (p == nullptr) return error;
  char* at = p;
  switch (len_bytes) {
    case 1:
      *at = static_cast<char>(n);
      break;
    case 3:
      *at = static_cast<char>(0xFC);
      StoreLE(at + 1, n, 2);
      break;
    case 4:
      *at = static_cast<char>(0xFD);
      StoreLE(at + 1, n, 3);
      break;
    default:
      *at = static_cast<char>(0xFE);
      StoreLE(at + 1, n, 8);
      break;
  }
  // Copied past the claimed length prefix in one pass.
  Reserve(len_ + n);
  std::memcpy(buf_.data() + len_, bytes.data(), n);
  len_ += n;
  return absl::OkStatus();
}

absl::Status BulkExecuteBuilder::AddDecimalText(std::string_view digits) {
  return AddLengthPrefixed(ParamType::kNewDecimal, digits);
}
absl::Status BulkExecuteBuilder::AddString(std::string_view text) {
  return AddLengthPrefixed(ParamType::kString, text);
}
absl::Status BulkExecuteBuilder::AddBlob(std::string_view bytes) {
  return AddLengthPrefixed(ParamType::kBlob, bytes);
}

absl::Status BulkExecuteBuilder::EndRow() {
  if (next_ != params_) {
    return absl::InternalError(
        absl::StrCat("bulk row has ", next_, " values for ", params_, " parameters"));
  }
  next_ = 0;
  ++rows_;
  row_ends_.push_back(len_);
  return absl::OkStatus();
}

void BulkExecuteBuilder::SetStatementId(uint32_t id) {
  for (int i = 0; i < 4; ++i) buf_[1 + i] = static_cast<char>(id >> (8 * i));
}

void BulkExecuteBuilder::TruncateTo(Mark mark) {
  if (mark.bytes < len_) len_ = mark.bytes;
  rows_ = mark.rows;
  row_ends_.resize(mark.rows);
  next_ = 0;
}

}  // namespace binrelay::protocol
