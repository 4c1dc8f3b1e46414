#include "proxy/replication_commands.h"

#include "absl/strings/str_cat.h"
#include "protocol/byte_cursor.h"
#include "protocol/capabilities.h"
#include "protocol/status_macros.h"

namespace binrelay::proxy {
namespace {

using protocol::ByteCursor;

absl::Status CheckCommand(ByteCursor& c, uint8_t want, std::string_view name) {
  uint8_t got = c.U8();
  if (!c.ok()) return c.status(name);
  if (got != want) {
    return absl::InvalidArgumentError(
        absl::StrCat(AV(name), " payload starts with command byte ", got, ", not ", want));
  }
  return absl::OkStatus();
}

// 1-byte length + bytes. Servers read it as lenenc, but real clients never
// send >= 251 bytes; a 0xFB..0xFF prefix is refused rather than guessed at.
std::string_view ShortString(ByteCursor& c) {
  uint8_t n = c.U8();
  if (n >= 251) {
    c.Fail();
    return {};
  }
  return c.Bytes(n);
}

}  // namespace

absl::StatusOr<ReplicaRegistration> ParseRegisterSlave(std::string_view payload) {
  ByteCursor c(payload);
  BR_RETURN_IF_ERROR(CheckCommand(c, protocol::command::kRegisterSlave, "COM_REGISTER_SLAVE"));
  ReplicaRegistration r;
  r.server_id = c.U32();
  r.report_host = std::string(ShortString(c));
  r.report_user = std::string(ShortString(c));
  r.report_password = std::string(ShortString(c));
  r.report_port = c.U16();
  if (!c.ok()) return c.status("COM_REGISTER_SLAVE");
  // rank(4) and master_id(4) are optional in practice: old clients stop early.
  if (c.remaining() >= 8) {
    c.Skip(4);
    r.master_id = c.U32();
  }
  return r;
}

absl::StatusOr<DumpRequest> ParseBinlogDump(std::string_view payload) {
  ByteCursor c(payload);
  BR_RETURN_IF_ERROR(CheckCommand(c, protocol::command::kBinlogDump, "COM_BINLOG_DUMP"));
  DumpRequest d;
  d.kind = DumpRequest::Kind::kFilePosition;
  d.position = c.U32();
  d.flags = c.U16();
  d.server_id = c.U32();
  if (!c.ok()) return c.status("COM_BINLOG_DUMP header");
  std::string_view name = c.Rest();
  name = name.substr(0, name.find('\0'));  // npos: the whole rest
  if (name.size() >= kMaxBinlogNameLength) {
    return absl::InvalidArgumentError(absl::StrCat(
        "COM_BINLOG_DUMP names a binlog of ", name.size(), " bytes (the limit is ",
        kMaxBinlogNameLength - 1, ")"));
  }
  d.file = std::string(name);
  return d;
}

absl::StatusOr<DumpRequest> ParseBinlogDumpGtid(std::string_view payload) {
  ByteCursor c(payload);
  BR_RETURN_IF_ERROR(CheckCommand(c, protocol::command::kBinlogDumpGtid, "COM_BINLOG_DUMP_GTID"));
  DumpRequest d;
  d.kind = DumpRequest::Kind::kMySqlGtid;
  d.flags = c.U16();
  d.server_id = c.U32();
  uint32_t name_len = c.U32();
  d.file = std::string(c.Bytes(name_len));
  d.position = c.U64();
  if (!c.ok()) return c.status("COM_BINLOG_DUMP_GTID file and position");
  uint32_t data_len = c.U32();
  d.encoded_gtid_set = std::string(c.Bytes(data_len));
  if (!c.ok()) return c.status("COM_BINLOG_DUMP_GTID GTID set");
  return d;
}

}  // namespace binrelay::proxy
