#include "protocol/stmt_execute.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "protocol/capabilities.h"

namespace binrelay::protocol {
namespace {

// Bytes of the value at `p` (past its indicator) of a parameter of `type`,
// or 0 if it runs past `end`.
size_t ValueBytes(ParamType type, const unsigned char* p, const unsigned char* end) {
  const size_t avail = static_cast<size_t>(end - p);
  switch (type) {
    case ParamType::kLongLong:
    case ParamType::kDouble:
      return avail >= 8 ? 8 : 0;
    case ParamType::kDate:
    case ParamType::kDatetime:
    case ParamType::kTime:
      // A length byte, then that many bytes (MYSQL_TIME's packed layouts).
      return avail >= 1 && avail >= 1 + size_t{p[0]} ? 1 + size_t{p[0]} : 0;
    case ParamType::kNewDecimal:
    case ParamType::kString:
    case ParamType::kBlob: {
      if (avail == 0) return 0;
      size_t prefix = 1;
      uint64_t n = p[0];
      if (p[0] == 0xFC || p[0] == 0xFD || p[0] == 0xFE) {
        prefix = p[0] == 0xFC ? 3 : p[0] == 0xFD ? 4 : 9;
        if (avail < prefix) return 0;
        n = 0;
        for (size_t i = prefix - 1; i >= 1; --i) n = (n << 8) | p[i];
      }
      return avail - prefix >= n ? prefix + n : 0;
    }
    case ParamType::kNull:
      return 0;
  }
  return 0;
}

}  // namespace

absl::Status BuildStmtExecute(const BulkExecuteBuilder& rows, size_t first, size_t count,
                              uint32_t id, std::string* out) {
  const size_t per_row = rows.params();
  const size_t n = per_row * count;
  const size_t bitmap = (n + 7) / 8;
  size_t value_bytes = 0;
  for (size_t r = first; r < first + count; ++r) value_bytes += rows.row(r).size();
  out->clear();
  out->reserve(1 + 4 + 1 + 4 + bitmap + 1 + 2 * n + value_bytes);
  out->push_back(static_cast<char>(command::kStmtExecute));
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(id >> (8 * i)));
  out->push_back('\0');                  // CURSOR_TYPE_NO_CURSOR
  out->append("\x01\x00\x00\x00", 4);    // iteration count
  const size_t bitmap_at = out->size();
  out->append(bitmap, '\0');
  out->push_back('\x01');                // new parameters bound: types follow
  for (size_t r = 0; r < count; ++r) {
    for (uint16_t p = 0; p < rows.params(); ++p) out->append(rows.param_slot(p));
  }
  size_t param = 0;  // index in the statement
  for (size_t r = first; r < first + count; ++r) {
    const std::string_view row = rows.row(r);
    const auto* p = reinterpret_cast<const unsigned char*>(row.data());
    const auto* end = p + row.size();
    for (uint16_t c = 0; c < rows.params(); ++c, ++param) {
      if (p >= end) return absl::InternalError(absl::StrCat("bulk row ", r, " ends early"));
      if (*p++ != 0) {  // NULL indicator
        (*out)[bitmap_at + param / 8] |= static_cast<char>(1u << (param % 8));
        continue;
      }
      const auto type = static_cast<ParamType>(rows.param_slot(c)[0]);
      const size_t bytes = ValueBytes(type, p, end);
      if (bytes == 0) {
        return absl::InternalError(
            absl::StrCat("bulk row ", r, " value ", c, " of type ", static_cast<int>(type),
                         " does not parse"));
      }
      out->append(reinterpret_cast<const char*>(p), bytes);
      p += bytes;
    }
    if (p != end) return absl::InternalError(absl::StrCat("bulk row ", r, " has extra bytes"));
  }
  return absl::OkStatus();
}

}  // namespace binrelay::protocol
