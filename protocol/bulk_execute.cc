#include "protocol/bulk_execute.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/capabilities.h"

namespace binrelay::protocol {
namespace {

constexpr size_t kHeader = 1 + 4 + 2;  // command, statement id, flags
constexpr uint16_t kSendTypes = 128;   // STMT_BULK_FLAG_CLIENT_SEND_TYPES
constexpr char kIndicatorValue = 0;    // STMT_INDICATOR_NONE
constexpr char kIndicatorNull = 1;     // STMT_INDICATOR_NULL
constexpr uint8_t kUnsignedFlag = 0x80;

}  // namespace

void BulkExecuteBuilder::Start(uint32_t id, uint16_t params) {
  buf_.clear();
  buf_.push_back(static_cast<char>(command::kStmtBulkExecute));
  AppendFixed(&buf_, id, 4);
  AppendFixed(&buf_, kSendTypes, 2);
  for (uint16_t i = 0; i < params; ++i) {
    buf_.push_back(static_cast<char>(ParamType::kNull));
    buf_.push_back('\0');
  }
  params_ = params;
  next_ = 0;
  rows_ = 0;
}

absl::Status BulkExecuteBuilder::SetType(ParamType type, bool is_unsigned) {
  if (next_ >= params_) {
    return absl::InternalError(absl::StrCat("bulk row has more than ", params_, " values"));
  }
  char* slot = buf_.data() + kHeader + 2 * size_t{next_};
  const auto want = static_cast<char>(type);
  const char flags = is_unsigned ? static_cast<char>(kUnsignedFlag) : '\0';
  if (slot[0] == static_cast<char>(ParamType::kNull)) {
    slot[0] = want;
    slot[1] = flags;
  } else if (slot[0] != want || slot[1] != flags) {
    return absl::InternalError(absl::StrCat("bulk parameter ", next_, " has type ",
                                            static_cast<uint8_t>(slot[0]), " in an earlier row and ",
                                            static_cast<uint8_t>(type), " now"));
  }
  buf_.push_back(kIndicatorValue);
  ++next_;
  return absl::OkStatus();
}

void BulkExecuteBuilder::AddNull() {
  buf_.push_back(kIndicatorNull);
  ++next_;
}

absl::Status BulkExecuteBuilder::AddInteger(uint64_t v, bool is_unsigned) {
  if (absl::Status s = SetType(ParamType::kLongLong, is_unsigned); !s.ok()) return s;
  AppendFixed(&buf_, v, 8);
  return absl::OkStatus();
}

absl::Status BulkExecuteBuilder::AddDouble(double d) {
  if (absl::Status s = SetType(ParamType::kDouble, false); !s.ok()) return s;
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  AppendFixed(&buf_, bits, 8);  // float8store: IEEE 754, little-endian
  return absl::OkStatus();
}

absl::Status BulkExecuteBuilder::AddLengthPrefixed(ParamType type, std::string_view bytes) {
  if (absl::Status s = SetType(type, false); !s.ok()) return s;
  AppendLenenc(&buf_, bytes.size());
  buf_.append(bytes);
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
  return absl::OkStatus();
}

void BulkExecuteBuilder::SetStatementId(uint32_t id) {
  for (int i = 0; i < 4; ++i) buf_[1 + i] = static_cast<char>(id >> (8 * i));
}

void BulkExecuteBuilder::TruncateTo(Mark mark) {
  if (mark.bytes < buf_.size()) buf_.resize(mark.bytes);
  rows_ = mark.rows;
  next_ = 0;
}

}  // namespace binrelay::protocol
