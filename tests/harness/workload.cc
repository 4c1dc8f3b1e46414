#include "tests/harness/workload.h"

#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "protocol/status_macros.h"
#include "tests/harness/sql_conn.h"

namespace binrelay::testing {
namespace {

// Values from a fixed seed: the same workload every run, so a failure
// reproduces; varied enough to exercise several column types.
class Values {
 public:
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  std::string Name() {
    static const char* const kWords[] = {"alpha", "beta", "gamma", "delta", "epsilon",
                                         "zeta",  "eta",  "theta", "iota",  "kappa"};
    return absl::StrCat(kWords[Int(0, 9)], "-", Int(0, 99999));
  }
  // An items row: id, qty, name, price, created, note (NULL now and then).
  std::string ItemRow(int id) {
    std::string note = Int(0, 4) == 0 ? "NULL" : absl::StrCat("REPEAT('n', ", Int(1, 3000), ")");
    return absl::StrCat("(", id, ", ", Int(-1000, 1000), ", '", Name(), "', ", Int(0, 9999999),
                        "/100, '2024-0", Int(1, 9), "-1", Int(0, 9), " 12:", Int(10, 59), ":",
                        Int(10, 59), ".", Int(0, 999999), "', ", note, ")");
  }

 private:
  std::mt19937 rng_{20240611};
};

class Mix {
 public:
  Mix(ServerSandbox& sb, std::string db, const MixedWorkloadOptions& o)
      : sb_(sb), db_(std::move(db)), o_(o) {}

  absl::Status Run() {
    BR_RETURN_IF_ERROR(Schema());
    BR_RETURN_IF_ERROR(Phase(&Mix::Inserts));
    BR_RETURN_IF_ERROR(Phase(&Mix::UpdatesAndDeletes));
    BR_RETURN_IF_ERROR(Phase(&Mix::Ddl));
    BR_RETURN_IF_ERROR(Phase(&Mix::Transactions));
    BR_RETURN_IF_ERROR(Phase(&Mix::LargeTransaction));
    BR_RETURN_IF_ERROR(Phase(&Mix::BigRow));
    // GTID domains are MariaDB's.
    if (o_.second_domain && !sb_.IsMysql()) BR_RETURN_IF_ERROR(Phase(&Mix::SecondDomain));
    return absl::OkStatus();
  }

 private:
  absl::Status X(std::string_view sql) { return sb_.Execute(sql); }
  // Column list: the table gains a column half-way (Ddl).
  std::string ItemsInsert() const {
    return absl::StrCat("INSERT INTO ", T("items"),
                        " (id, qty, name, price, created, note) VALUES ");
  }
  std::string T(std::string_view table) const { return absl::StrCat("`", db_, "`.", AV(table)); }
  // SELECT `columns` over seq = 1..n: MariaDB's sequence engine, a
  // recursive CTE on MySQL (which has no seq_1_to_N tables).
  std::string SelectSeq(int n, std::string_view columns) const {
    if (!sb_.IsMysql()) {
      return absl::StrCat("SELECT ", AV(columns), " FROM ", T("seq_1_to_"), n);
    }
    return absl::StrCat("SELECT ", AV(columns), " FROM (WITH RECURSIVE seq_cte (seq) AS (SELECT 1 "
                        "UNION ALL SELECT seq + 1 FROM seq_cte WHERE seq < ", n,
                        ") SELECT seq FROM seq_cte) AS d");
  }

  absl::Status Phase(absl::Status (Mix::*phase)()) {
    if (o_.rotate_between_phases) BR_RETURN_IF_ERROR(X("FLUSH BINARY LOGS"));
    return (this->*phase)();
  }

  absl::Status Schema() {
    // The recursive CTE of SelectSeq goes as deep as the largest insert.
    if (sb_.IsMysql()) BR_RETURN_IF_ERROR(X("SET SESSION cte_max_recursion_depth = 10000000"));
    BR_RETURN_IF_ERROR(X(absl::StrCat("CREATE DATABASE `", db_, "`")));
    BR_RETURN_IF_ERROR(X(absl::StrCat(
        "CREATE TABLE ", T("items"),
        " (id INT PRIMARY KEY, qty INT NOT NULL, name VARCHAR(64) CHARACTER SET utf8mb4, "
        "price DECIMAL(10,2), created DATETIME(6), note TEXT, KEY (qty))")));
    // No primary key: the replica has to find rows by their full image.
    BR_RETURN_IF_ERROR(X(absl::StrCat("CREATE TABLE ", T("nopk"), " (a INT, b VARCHAR(32))")));
    BR_RETURN_IF_ERROR(X(absl::StrCat(
        "CREATE TABLE ", T("bulk"), " (id INT PRIMARY KEY, v BIGINT, s CHAR(32))")));
    return X(absl::StrCat("CREATE TABLE ", T("blobs"),
                          " (id INT PRIMARY KEY, tag VARCHAR(16), data LONGBLOB)"));
  }

  absl::Status Inserts() {
    for (int first = 1; first <= o_.rows; first += 100) {
      std::vector<std::string> rows;
      for (int id = first; id < first + 100 && id <= o_.rows; ++id) rows.push_back(v_.ItemRow(id));
      BR_RETURN_IF_ERROR(
          X(absl::StrCat(ItemsInsert(), absl::StrJoin(rows, ", "))));
    }
    BR_RETURN_IF_ERROR(X(absl::StrCat("INSERT INTO ", T("nopk"), " ",
                                      SelectSeq(o_.rows / 4, "seq % 50, CONCAT('b', seq)"))));
    for (int i = 0; i < 50; ++i) {  // autocommit single-row statements
      BR_RETURN_IF_ERROR(X(absl::StrCat(ItemsInsert(),
                                        v_.ItemRow(o_.rows + 1 + i))));
    }
    return absl::OkStatus();
  }

  absl::Status UpdatesAndDeletes() {
    BR_RETURN_IF_ERROR(X(absl::StrCat("UPDATE ", T("items"),
                                      " SET qty = qty + 1, note = CONCAT(IFNULL(note, ''), 'u') "
                                      "WHERE id % 7 = 0")));
    for (int i = 0; i < 50; ++i) {
      BR_RETURN_IF_ERROR(X(absl::StrCat("UPDATE ", T("items"), " SET name = '", v_.Name(),
                                        "', price = NULL WHERE id = ", v_.Int(1, o_.rows))));
    }
    BR_RETURN_IF_ERROR(X(absl::StrCat("UPDATE ", T("nopk"), " SET b = CONCAT(b, '+') WHERE a < 5")));
    BR_RETURN_IF_ERROR(X(absl::StrCat("DELETE FROM ", T("items"), " WHERE id % 13 = 0")));
    BR_RETURN_IF_ERROR(X(absl::StrCat("DELETE FROM ", T("nopk"), " WHERE a % 5 = 0")));
    for (int i = 0; i < 20; ++i) {
      BR_RETURN_IF_ERROR(
          X(absl::StrCat("DELETE FROM ", T("items"), " WHERE id = ", v_.Int(1, o_.rows))));
    }
    return absl::OkStatus();
  }

  absl::Status Ddl() {
    BR_RETURN_IF_ERROR(X(absl::StrCat(
        "ALTER TABLE ", T("items"),
        " ADD COLUMN flags SET('a','b','c') NOT NULL DEFAULT 'b', MODIFY name VARCHAR(128)")));
    BR_RETURN_IF_ERROR(
        X(absl::StrCat("UPDATE ", T("items"), " SET flags = 'a,c' WHERE id % 3 = 0")));
    BR_RETURN_IF_ERROR(X(absl::StrCat("CREATE TABLE ", T("scratch"),
                                      " (id INT AUTO_INCREMENT PRIMARY KEY, v DOUBLE)")));
    BR_RETURN_IF_ERROR(X(absl::StrCat("INSERT INTO ", T("scratch"), " (v) VALUES (1.5), (-2.25)")));
    BR_RETURN_IF_ERROR(X(absl::StrCat("DROP TABLE ", T("scratch"))));
    BR_RETURN_IF_ERROR(X(absl::StrCat("CREATE TABLE ", T("renamed_from"),
                                      " (id INT PRIMARY KEY, d DATE) ENGINE=InnoDB")));
    BR_RETURN_IF_ERROR(X(absl::StrCat("INSERT INTO ", T("renamed_from"),
                                      " VALUES (1, '2001-02-03'), (2, NULL)")));
    BR_RETURN_IF_ERROR(
        X(absl::StrCat("RENAME TABLE ", T("renamed_from"), " TO ", T("renamed_to"))));
    BR_RETURN_IF_ERROR(X(absl::StrCat("CREATE INDEX by_name ON ", T("items"), " (name)")));
    BR_RETURN_IF_ERROR(X(absl::StrCat("TRUNCATE TABLE ", T("renamed_to"))));
    return X(absl::StrCat("INSERT INTO ", T("renamed_to"), " VALUES (3, '2020-12-31')"));
  }

  absl::Status Transactions() {
    // Several tables in one transaction, then one that is rolled back (it
    // must leave no trace on the replicas either).
    BR_RETURN_IF_ERROR(X("BEGIN"));
    BR_RETURN_IF_ERROR(X(absl::StrCat(ItemsInsert(),
                                      v_.ItemRow(o_.rows + 1000), ", ",
                                      v_.ItemRow(o_.rows + 1001))));
    BR_RETURN_IF_ERROR(X(absl::StrCat("UPDATE ", T("nopk"), " SET a = a + 100 WHERE a = 7")));
    BR_RETURN_IF_ERROR(X(absl::StrCat("DELETE FROM ", T("items"), " WHERE id = 2")));
    BR_RETURN_IF_ERROR(X("COMMIT"));
    BR_RETURN_IF_ERROR(X("BEGIN"));
    BR_RETURN_IF_ERROR(X(absl::StrCat("DELETE FROM ", T("items"))));
    return X("ROLLBACK");
  }

  absl::Status LargeTransaction() {
    if (o_.large_transaction_rows <= 0) return absl::OkStatus();
    BR_RETURN_IF_ERROR(X("BEGIN"));
    BR_RETURN_IF_ERROR(X(absl::StrCat("INSERT INTO ", T("bulk"), " ",
                                      SelectSeq(o_.large_transaction_rows,
                                                "seq, seq * 7, LEFT(SHA2(seq, 256), 32)"))));
    BR_RETURN_IF_ERROR(X(absl::StrCat("UPDATE ", T("bulk"), " SET v = v + 1 WHERE id % 10 = 0")));
    return X("COMMIT");
  }

  absl::Status BigRow() {
    if (o_.big_row_bytes == 0) return absl::OkStatus();
    // 32-byte pattern (SHA-256) repeated: not one repeated byte, so a
    // shifted or duplicated chunk changes the checksum.
    BR_RETURN_IF_ERROR(X(absl::StrCat("INSERT INTO ", T("blobs"),
                                      " VALUES (1, 'big', REPEAT(UNHEX(SHA2('binrelay', 256)), ",
                                      o_.big_row_bytes / 32, "))")));
    // FULL row image: before and after in one ~2x-sized rows event.
    BR_RETURN_IF_ERROR(X(absl::StrCat("UPDATE ", T("blobs"), " SET tag = 'big2' WHERE id = 1")));
    return X(absl::StrCat("INSERT INTO ", T("blobs"), " VALUES (2, 'small', 'x')"));
  }

  absl::Status SecondDomain() {
    BR_RETURN_IF_ERROR(X("SET SESSION gtid_domain_id = 2"));
    absl::Status s = X(absl::StrCat(ItemsInsert(),
                                    v_.ItemRow(o_.rows + 2000)));
    if (s.ok()) s = X(absl::StrCat("UPDATE ", T("renamed_to"), " SET d = '1999-01-01'"));
    absl::Status back = X("SET SESSION gtid_domain_id = 0");
    BR_RETURN_IF_ERROR(s);
    return back;
  }

  ServerSandbox& sb_;
  std::string db_;
  MixedWorkloadOptions o_;
  Values v_;
};

}  // namespace

absl::Status RunMixedWorkload(ServerSandbox& source, const std::string& db,
                              const MixedWorkloadOptions& options) {
  return Annotate(Mix(source, db, options).Run(), absl::StrCat("mixed workload in ", db));
}

absl::StatusOr<std::unique_ptr<SteadyWorkload>> SteadyWorkload::Start(
    const ServerSandbox& source, const std::string& db, const SteadyWorkloadOptions& options) {
  std::unique_ptr<SteadyWorkload> w(new SteadyWorkload());
  w->db_ = db;
  w->options_ = options;
  BR_ASSIGN_OR_RETURN(w->conn_, SqlConn::Open(source));
  BR_RETURN_IF_ERROR(w->conn_->Exec(absl::StrCat(
      "CREATE DATABASE `", db, "`; CREATE TABLE `", db,
      "`.t (id INT PRIMARY KEY, v INT NOT NULL, pad VARCHAR(2000))")));
  w->thread_ = std::thread([raw = w.get()] { raw->Run(); });
  return w;
}

void SteadyWorkload::Run() {
  const std::string t = absl::StrCat("`", db_, "`.t");
  for (int64_t k = 1; !stop_.load(); ++k) {
    std::string sql = options_.rotate_every > 0 && k % options_.rotate_every == 0
                          ? "FLUSH BINARY LOGS; "
                          : "";
    absl::StrAppend(
        &sql, "BEGIN; INSERT INTO ", t, " VALUES (", k, ", ", k, ", REPEAT('s', ", 100 + k % 900,
        ")); UPDATE ", t, " SET v = v + 1 WHERE id = ", k - 1, ";");
    if (k % 10 == 0) absl::StrAppend(&sql, " DELETE FROM ", t, " WHERE id = ", k - 9, ";");
    absl::StrAppend(&sql, " COMMIT");
    status_ = conn_->Exec(sql);
    if (!status_.ok()) return;
    done_.store(k);
    std::this_thread::sleep_for(options_.pause);
  }
}

absl::Status SteadyWorkload::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  return Annotate(status_, absl::StrCat("steady workload after ", done_.load(), " transactions"));
}

SteadyWorkload::~SteadyWorkload() { (void)Stop(); }

}  // namespace binrelay::testing
