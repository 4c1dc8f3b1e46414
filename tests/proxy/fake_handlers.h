// Fakes of the proxy's consumer-owned interfaces (AdminHandler,
// DumpHandler) for unit and integration tests: fixed variables and result
// sets, and a record of every call.
//
// Thread safety: every method locks, so a listener on another thread may
// call them while the test thread inspects the record.
// Lifetime: results are copies.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "protocol/packet_framer.h"
#include "protocol/server_packets.h"
#include "protocol/status_macros.h"
#include "proxy/admin_handler.h"
#include "proxy/client_error.h"

namespace binrelay::proxy::fakes {

class FakeAdminHandler : public AdminHandler {
 public:
  FakeAdminHandler() {
    variables_ = {{"server_id", "7"},
                  {"server_uuid", "3e11fa47-71ca-11e1-9e33-c80aa9429562"},
                  {"binlog_checksum", "CRC32"},
                  {"gtid_mode", "OFF"},
                  {"gtid_domain_id", "0"},
                  {"gtid_binlog_pos", "0-1-100"},
                  {"gtid_current_pos", "0-1-100"},
                  {"gtid_executed", ""},
                  {"gtid_purged", ""},
                  {"rpl_semi_sync_master_enabled", "OFF"}};
  }
  std::optional<std::string> SystemVariable(std::string_view name) override {
    std::lock_guard<std::mutex> l(mu_);
    // What a broken handler does: an exception escapes into the connection.
    if (!throw_on_.empty() && name == throw_on_) throw std::runtime_error("fake handler failure");
    auto it = variables_.find(std::string(name));
    if (it == variables_.end()) return std::nullopt;
    return it->second;
  }
  absl::StatusOr<ResultSet> MasterStatus() override {
    return ResultSet{{"File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB"},
                     {{std::string("mysql-bin.000003"), std::string("1234"), std::string(),
                       std::string()}}};
  }
  absl::StatusOr<ResultSet> BinaryLogs() override {
    return ResultSet{{"Log_name", "File_size"},
                     {{std::string("mysql-bin.000002"), std::string("500")},
                      {std::string("mysql-bin.000003"), std::string("1234")}}};
  }
  absl::StatusOr<ResultSet> Replicas() override {
    std::lock_guard<std::mutex> l(mu_);
    ResultSet rs{{"Server_id", "Host", "Port", "Master_id"}, {}};
    for (const auto& r : registrations_) {
      rs.rows.push_back({std::to_string(r.server_id), r.report_host,
                         std::to_string(r.report_port), std::to_string(r.master_id)});
    }
    return rs;
  }
  absl::StatusOr<ResultSet> RelayStatus() override {
    return ResultSet{{"Upstream_state", "Last_error"},
                     {{std::string("streaming"), std::nullopt}}};
  }
  absl::Status PurgeBinaryLogsTo(std::string_view file) override {
    std::lock_guard<std::mutex> l(mu_);
    if (file != "mysql-bin.000002" && file != "mysql-bin.000003") {
      return absl::NotFoundError(absl::StrCat("no binlog '", AV(file), "'"));
    }
    purged_to_.emplace_back(file);
    return absl::OkStatus();
  }
  absl::StatusOr<std::optional<std::string>> BinlogGtidPos(std::string_view file,
                                                           uint64_t position) override {
    if (file == "mysql-bin.000003" && position == 1234) return std::optional<std::string>("0-1-100");
    return std::optional<std::string>();
  }
  void ReplicaRegistered(const ReplicaRegistration& replica) override {
    std::lock_guard<std::mutex> l(mu_);
    registrations_.push_back(replica);
  }

  void throw_on(std::string name) {
    std::lock_guard<std::mutex> l(mu_);
    throw_on_ = std::move(name);
  }
  void ReplicaDisconnected(uint32_t) override { ++disconnected_; }
  int disconnected() const { return disconnected_.load(); }
  std::vector<std::string> purged_to() {
    std::lock_guard<std::mutex> l(mu_);
    return purged_to_;
  }
  std::vector<ReplicaRegistration> registrations() {
    std::lock_guard<std::mutex> l(mu_);
    return registrations_;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::string> variables_;
  std::vector<std::string> purged_to_;
  std::vector<ReplicaRegistration> registrations_;
  std::string throw_on_;
  std::atomic<int> disconnected_{0};
};

// A dump with nothing to send: a non-blocking one ends with EOF at once, a
// blocking one with an error (so clients under test exit instead of
// waiting for events that never come).
class FakeDumpStream : public DumpStream {
 public:
  // `hold`: a blocking dump that stays caught up, never woken (as a dump of
  // an idle source); `live` counts the streams that exist.
  explicit FakeDumpStream(bool non_blocking, bool hold = false, std::atomic<int>* live = nullptr)
      : non_blocking_(non_blocking), hold_(hold), live_(live) {
    if (live_) ++*live_;
  }
  ~FakeDumpStream() override {
    if (live_) --*live_;
  }
  absl::StatusOr<Progress> Fill(std::string* out, size_t) override {
    if (!non_blocking_ && hold_) return Progress::kCaughtUp;
    if (!non_blocking_) return absl::UnimplementedError("fake dump: no events to stream");
    uint8_t seq = 1;
    protocol::AppendFramedPacket(out, protocol::BuildEofPacket(), &seq);
    return Progress::kFinished;
  }
  void AppendHeartbeat(std::string*) override {}
  void AppendError(std::string* out, const absl::Status& error) override {
    uint8_t seq = 1;
    protocol::ServerError e = ClientErrorFor(error, 1236);
    protocol::AppendFramedPacket(out, protocol::BuildErrPacket(e.code, e.sql_state, e.message),
                                 &seq);
  }
  void RequestEnd(absl::Status) override {}
  std::chrono::nanoseconds heartbeat_period() const override { return {}; }
  bool ArmWake(std::function<void()>) override { return true; }
  void DisarmWake() override {}

 private:
  bool non_blocking_;
  bool hold_;
  std::atomic<int>* live_;
};

class FakeDumpHandler : public DumpHandler {
 public:
  absl::StatusOr<std::unique_ptr<DumpStream>> StartDump(const DumpRequest& request) override {
    std::lock_guard<std::mutex> l(mu_);
    requests_.push_back(request);
    if (!result_.ok()) return result_;
    return std::unique_ptr<DumpStream>(new FakeDumpStream(request.NonBlocking(), hold_, &live_));
  }
  void set_hold(bool hold) {
    std::lock_guard<std::mutex> l(mu_);
    hold_ = hold;
  }
  int live() const { return live_.load(); }
  void set_result(absl::Status s) {
    std::lock_guard<std::mutex> l(mu_);
    result_ = std::move(s);
  }
  std::vector<DumpRequest> requests() {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }

 private:
  std::mutex mu_;
  absl::Status result_ = absl::OkStatus();
  std::vector<DumpRequest> requests_;
  bool hold_ = false;
  std::atomic<int> live_{0};
};

}  // namespace binrelay::proxy::fakes
