#include "replication/dump_commands.h"

#include <algorithm>

#include "protocol/byte_cursor.h"

namespace binrelay::replication {
namespace {

using protocol::AppendFixed;

constexpr char kComBinlogDump = 0x12;
constexpr char kComRegisterSlave = 0x15;
constexpr char kComBinlogDumpGtid = 0x1E;

// The register packet's strings carry a 1-byte length; longer values would be
// misparsed by the server, so they are cut at 250 bytes.
void AppendShortString(std::string* out, std::string_view s) {
  s = s.substr(0, std::min<size_t>(s.size(), 250));
  out->push_back(static_cast<char>(s.size()));
  out->append(s);
}

}  // namespace

std::string BuildRegisterSlave(const RegisterReplica& r) {
  std::string out(1, kComRegisterSlave);
  AppendFixed(&out, r.server_id, 4);
  AppendShortString(&out, r.report_host);
  AppendShortString(&out, r.report_user);
  AppendShortString(&out, r.report_password);
  AppendFixed(&out, r.report_port, 2);
  AppendFixed(&out, 0, 4);  // replication rank, ignored
  AppendFixed(&out, 0, 4);  // master id, filled by the server
  return out;
}

std::string BuildBinlogDump(uint32_t server_id, std::string_view file, uint32_t position,
                            uint16_t flags) {
  std::string out(1, kComBinlogDump);
  AppendFixed(&out, position, 4);
  AppendFixed(&out, flags, 2);
  AppendFixed(&out, server_id, 4);
  out.append(file);
  return out;
}

std::string BuildBinlogDumpGtid(uint32_t server_id, std::string_view file, uint64_t position,
                                uint16_t flags, std::string_view encoded_gtid_set) {
  std::string out(1, kComBinlogDumpGtid);
  AppendFixed(&out, flags, 2);
  AppendFixed(&out, server_id, 4);
  AppendFixed(&out, file.size(), 4);
  out.append(file);
  AppendFixed(&out, position, 8);
  AppendFixed(&out, encoded_gtid_set.size(), 4);
  out.append(encoded_gtid_set);
  return out;
}

}  // namespace binrelay::replication
