// GTID-related events: MySQL GTID (33) / ANONYMOUS_GTID (34) with all 8.0
// optional fields (libbinlogevents/src/control_events.cpp Gtid_event),
// GTID_TAGGED (42, mysql::serialization format), PREVIOUS_GTIDS (35,
// sql/rpl_gtid_set.cc Gtid_set::encode, untagged and tagged set encodings)
// as text, MariaDB GTID (162, sql/log_event.cc Gtid_log_event), GTID_LIST
// (163) and BINLOG_CHECKPOINT (161).
//
// Thread safety: pure functions.
// Lifetime: results own their data (GTIDs are kept past the event).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/event_header.h"

namespace binrelay::protocol {

struct MysqlGtid {
  uint8_t flags = 0;  // 0x01: may contain statement-based events
  std::array<uint8_t, 16> sid{};
  int64_t gno = 0;    // 0 for anonymous
  std::string tag;    // GTID_TAGGED only
  bool anonymous = false;
  bool has_logical_clock = false;
  int64_t last_committed = 0;
  int64_t sequence_number = 0;
  bool has_commit_timestamps = false;
  uint64_t immediate_commit_timestamp = 0;  // microseconds since epoch
  uint64_t original_commit_timestamp = 0;   // = immediate unless written by a replica
  bool has_transaction_length = false;
  uint64_t transaction_length = 0;
  bool has_server_versions = false;
  uint32_t immediate_server_version = 0;  // e.g. 80035
  uint32_t original_server_version = 0;
  bool has_commit_group_ticket = false;
  uint64_t commit_group_ticket = 0;

  // "uuid:gno", "uuid:tag:gno", or "ANONYMOUS".
  std::string ToString() const;
};

// Lower-case 8-4-4-4-12 text of a 16-byte UUID.
std::string UuidToString(const std::array<uint8_t, 16>& sid);

// UuidToString of the last UUID asked for, made again only when it changes:
// a stream's GTIDs mostly share one server's uuid, so readers that check
// every GTID against a set format it once.
class UuidText {
 public:
  const std::string& Of(const std::array<uint8_t, 16>& sid) {
    if (text_.empty() || sid != sid_) {
      sid_ = sid;
      text_ = UuidToString(sid);
    }
    return text_;
  }

 private:
  std::array<uint8_t, 16> sid_{};
  std::string text_;
};

// GTID (33), ANONYMOUS_GTID (34) or GTID_TAGGED (42).
absl::StatusOr<MysqlGtid> ParseMysqlGtid(const EventView& ev);

// PREVIOUS_GTIDS (35) body, or any encoded GTID set (sql/rpl_gtid_set.cc
// Gtid_set::encode), as text
// "uuid:1-5:7,uuid2[:tag]:1-3"; empty set -> "".
absl::StatusOr<std::string> DecodeGtidSetText(std::string_view encoded);

// MariaDB GTID flags2.
inline constexpr uint8_t kMariaGtidStandalone = 0x01;
inline constexpr uint8_t kMariaGtidGroupCommitId = 0x02;
inline constexpr uint8_t kMariaGtidTransactional = 0x04;
inline constexpr uint8_t kMariaGtidAllowParallel = 0x08;
inline constexpr uint8_t kMariaGtidWaited = 0x10;
inline constexpr uint8_t kMariaGtidDdl = 0x20;
inline constexpr uint8_t kMariaGtidPreparedXa = 0x40;
inline constexpr uint8_t kMariaGtidCompletedXa = 0x80;

struct MariaGtid {
  uint32_t domain_id = 0;
  uint32_t server_id = 0;  // from the event header
  uint64_t seq_no = 0;
  uint8_t flags2 = 0;
  uint64_t commit_id = 0;  // when flags2 & GROUP_COMMIT_ID
  // XA (PREPARED_XA / COMPLETED_XA)
  uint32_t xa_format_id = 0;
  std::string xa_gtrid;
  std::string xa_bqual;
  uint8_t flags_extra = 0;
  uint8_t extra_engines = 0;
  uint64_t start_alter_seq_no = 0;

  bool standalone() const { return (flags2 & kMariaGtidStandalone) != 0; }
  std::string ToString() const;  // "domain-server-seq"
};

absl::StatusOr<MariaGtid> ParseMariaGtid(const EventView& ev);

struct MariaGtidList {
  uint32_t flags = 0;  // bit 28 UNTIL_REACHED, bit 29 IGN_GTIDS (already shifted down: 1/2)
  struct Entry {
    uint32_t domain_id;
    uint32_t server_id;
    uint64_t seq_no;
  };
  std::vector<Entry> gtids;
  std::string ToString() const;  // "0-1-100,1-2-5"
};

absl::StatusOr<MariaGtidList> ParseMariaGtidList(const EventView& ev);

// BINLOG_CHECKPOINT (161): the file name.
absl::StatusOr<std::string> ParseBinlogCheckpoint(const EventView& ev);

}  // namespace binrelay::protocol
