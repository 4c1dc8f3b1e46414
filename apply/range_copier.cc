#include "apply/range_copier.h"

#include <algorithm>
#include <map>
#include <charconv>
#include <system_error>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "apply/sql_literal.h"
#include "protocol/status_macros.h"

namespace binrelay::apply {
namespace {

bool IsNumeric(const std::string& t) {
  return t == "tinyint" || t == "smallint" || t == "mediumint" || t == "int" ||
         t == "bigint" || t == "decimal" || t == "float" || t == "double" || t == "year";
}

bool IsCharacter(const std::string& t) {
  return t == "char" || t == "varchar" || t == "tinytext" || t == "text" ||
         t == "mediumtext" || t == "longtext";
}

bool IsTemporal(const std::string& t) {
  return t == "date" || t == "datetime" || t == "timestamp" || t == "time";
}

// Server text of a number: digits, sign, point, exponent. Anything else
// would be SQL, not a value.
bool LooksNumeric(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E')) {
      return false;
    }
  }
  return true;
}

// `s` whole as a number of type T (integers: optional '-', digits; double:
// the server's text).
template <typename T>
bool ParseWhole(std::string_view s, T* out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, *out);
  return ec == std::errc() && p == end;
}

absl::Status NotANumber(const std::function<std::string()>& where, size_t column,
                        std::string_view v) {
  return absl::DataLossError(absl::StrCat(where(), ": column ", column + 1, " returned '",
                                          AV(v.substr(0, 40)), "' for a number"));
}

absl::Status NotHex(const std::function<std::string()>& where, size_t column) {
  return absl::DataLossError(
      absl::StrCat(where(), ": HEX() of column ", column + 1, " returned non-hex text"));
}

// Rows per INSERT or bulk command: every warning of a batch (at most one
// duplicate per row) stays within max_error_count = 65535.
constexpr size_t kMaxBatchRows = 16384;

}  // namespace

std::string CopyTextExpression(const ShapeColumn& col) {
  std::string name;
  AppendIdentifier(col.name, &name);
  const std::string& t = col.data_type;
  // A FLOAT column prints with 6 significant digits (16777215 as
  // 16777200: sql/field.cc Field_float::val_str); widened to DOUBLE it
  // prints its exact value, which a FLOAT column takes back unchanged.
  if (t == "float") return absl::StrCat(name, " + 0e0");
  if (IsNumeric(t) || IsTemporal(t)) return name;
  if (t == "bit" || t == "enum" || t == "set") return absl::StrCat(name, " + 0");
  if (ColumnStyle(t) == LiteralStyle::kBinaryString) return name;
  if (IsCharacter(t) && !col.charset.empty() && col.charset != "binary") return name;
  return absl::StrCat("HEX(", name, ")");
}

absl::StatusOr<RangeCopier> RangeCopier::Create(const TableShape& source,
                                                const TableShape& target, bool bulk) {
  RangeCopier c;
  c.bulk_ = bulk;
  c.primary_key_suffixes_[0] = "for key 'PRIMARY'";
  // MySQL 8.0.19 and later name the key with its table.
  c.primary_key_suffixes_[1] = absl::StrCat("for key '", target.table, ".PRIMARY'");
  std::string columns;
  bool first = true;
  for (const ShapeColumn& col : source.columns) {
    if (col.generated) continue;
    if (!first) {
      columns.push_back(',');
      c.select_list_.push_back(',');
    }
    first = false;
    AppendIdentifier(col.name, &columns);
    Column out;
    const std::string& t = col.data_type;
    if (IsNumeric(t) || t == "bit" || t == "enum" || t == "set") {
      out.form = Form::kNumber;
      if (t == "float" || t == "double") {
        out.number = Number::kDouble;
      } else if (t == "decimal") {
        out.number = Number::kDecimal;
      } else if (t == "bit" || t == "enum" || t == "set" ||
                 col.column_type.find("unsigned") != std::string::npos) {
        out.number = Number::kUnsigned;
      }
    } else if (IsTemporal(t)) {
      out.form = Form::kQuoted;
    } else if (ColumnStyle(t) == LiteralStyle::kBinaryString) {
      out.form = Form::kBytes;
      out.charset = "binary";
    } else if (IsCharacter(t) && !col.charset.empty() && col.charset != "binary") {
      out.form = Form::kBytes;
      out.charset = col.charset;
    } else {
      // JSON (MySQL), GEOMETRY and other types without a charset.
      out.form = Form::kHex;
      out.charset = col.charset == "binary" ? "" : col.charset;
      // HEX() of MySQL's JSON is its text, in utf8mb4; a JSON column takes
      // it back only as text (a binary string is error 3144).
      if (t == "json") {
        out.charset = "utf8mb4";
        out.as_text = true;
      }
    }
    c.select_list_.append(CopyTextExpression(col));
    if (!c.length_sum_.empty()) c.length_sum_.push_back('+');
    absl::StrAppend(&c.length_sum_, "IFNULL(LENGTH(", CopyTextExpression(col), "),0)");
    c.columns_.push_back(std::move(out));
  }
  if (c.columns_.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        source.db, ".", source.table, " has no column that is not generated: nothing to copy"));
  }
  for (Write w : {Write::kInsertIgnore, Write::kReplace}) {
    std::string& head = c.head_[static_cast<int>(w)];
    head = w == Write::kInsertIgnore ? "INSERT IGNORE INTO " : "REPLACE INTO ";
    AppendIdentifier(target.db, &head);
    head.push_back('.');
    AppendIdentifier(target.table, &head);
    absl::StrAppend(&head, " (", columns, ") VALUES ");
    std::string& bulk_head = c.bulk_head_[static_cast<int>(w)];
    bulk_head = head;
    bulk_head.push_back('(');
    for (size_t i = 0; i < c.columns_.size(); ++i) bulk_head.append(i == 0 ? "?" : ",?");
    bulk_head.push_back(')');
  }
  return c;
}

absl::StatusOr<std::pair<uint64_t, uint64_t>> RangeCopier::SampleRowBytes(
    replication::SqlSource& source, const KeyRangeChunker& chunker, int limit) const {
  const std::string sql = absl::StrCat(
      "SELECT IFNULL(SUM(b), 0), COUNT(*) FROM (SELECT ", length_sum_, " AS b FROM ",
      chunker.table_sql(), " ORDER BY ", chunker.key_sql(), " LIMIT ", limit, ") AS sample");
  BR_ASSIGN_OR_RETURN(std::vector<replication::SqlRow> rows, source.Query(sql));
  std::pair<uint64_t, uint64_t> out{0, 0};
  if (rows.empty() || rows[0].size() < 2 || !rows[0][0] || !rows[0][1] ||
      !absl::SimpleAtoi(*rows[0][0], &out.first) || !absl::SimpleAtoi(*rows[0][1], &out.second)) {
    return absl::InternalError(absl::StrCat("sampling the row size of ", chunker.table_sql(),
                                            " on ", source.Peer(), ": unexpected result"));
  }
  return out;
}

absl::StatusOr<CopyResult> RangeCopier::Copy(replication::SqlSource& source,
                                             TargetSession& target, const KeyRange& range,
                                             const KeyRangeChunker& chunker, size_t batch_bytes,
                                             Write write, protocol::TextRows* scratch) const {
  // On a connection in the move's session (move_session.h): TIMESTAMP text
  // in UTC, strings as the bytes stored (character_set_results = binary).
  auto where = [&] {
    return absl::StrCat("copy of ", chunker.table_sql(), " rows ",
                        range.lower ? "after a bound" : "from the start", " to ",
                        range.upper ? "a bound" : "the end", " (", range.where.substr(0, 200),
                        ")");
  };
  const std::string sql = absl::StrCat(
      "SELECT ",
      select_list_, " FROM ", chunker.table_sql(), " WHERE ", range.where, " ORDER BY ",
      chunker.key_sql());
  // One buffer for the whole range: no allocation per value.
  protocol::TextRows own;
  protocol::TextRows& rows = scratch != nullptr ? *scratch : own;
  if (absl::Status read = source.QueryRowsInto(sql, &rows); !read.ok()) {
    return Annotate(read, absl::StrCat(where(), ", reading ", source.Peer()));
  }
  if (!rows.empty() && rows.columns() != columns_.size()) {
    return absl::InternalError(absl::StrCat(where(), " from ", source.Peer(), ": ",
                                            rows.columns(), " columns for ", columns_.size()));
  }
  // No batch may exceed what the target accepts. Every warning of a batch
  // stays readable: the session keeps 65535 (target_session.h) and a batch
  // holds at most kMaxBatchRows rows.
  auto max_statement = target.MaxStatementBytes();
  if (!max_statement.ok()) {
    return Annotate(max_statement.status(), absl::StrCat(where(), ", connecting to ", target.peer()));
  }
  batch_bytes = std::min(batch_bytes, *max_statement);
  if (bulk_) {
    BR_ASSIGN_OR_RETURN(bool takes_bulk, target.SupportsBulk());
    // A target logging statements (binlog_format STATEMENT, not changeable
    // by this account) refuses bulk commands (ER_BINLOG_NON_SUPPORTED_BULK).
    // A target without bulk commands (MySQL) gets prepared multi-row
    // statements, the values bound in the same binary form.
    if (!target.logs_statements()) {
      absl::StatusOr<CopyResult> n =
          CopyBulk(rows, target, batch_bytes, write, /*execute=*/!takes_bulk, where);
      // 4033: no bulk with this binlog format; 1461: no prepared statement
      // left (max_prepared_stmt_count). The text path needs neither, and
      // INSERT IGNORE of rows a failed command may have written is harmless.
      const int code = ServerErrorCode(n.status());
      if (n.ok() || (code != 4033 && code != 1461)) return n;
    }
  }
  return CopyText(rows, target, batch_bytes, write, where);
}

absl::Status RangeCopier::CheckWarnings(TargetSession& target, uint16_t warnings,
                                        const std::function<std::string()>& where,
                                        CopyResult* result) const {
  if (warnings == 0) return absl::OkStatus();
  // INSERT IGNORE turns errors into warnings. A row already there (1062
  // on the primary key: a change put it there first) is expected, and so
  // is a secondary unique value still held by a row the pipeline has not
  // updated yet (counted, see range_copier.h); anything else (a value
  // adjusted) is a copy that is not exact.
  auto shown = target.Query("SHOW WARNINGS");  // up to max_error_count of them (see Copy)
  if (!shown.ok()) return Annotate(shown.status(), where());
  for (const auto& w : shown->rows) {
    if (w.size() < 3) continue;
    const std::string code = w[1].value_or("");
    const std::string text = w[2].value_or("");
    if (code == "1062") {
      if (!absl::EndsWith(text, primary_key_suffixes_[0]) &&
          !absl::EndsWith(text, primary_key_suffixes_[1])) {
        ++result->unique_conflicts;
      }
      continue;
    }
    return absl::DataLossError(absl::StrCat(where(), ": the target ", target.peer(), " reported ",
                                            code, " ", text, "; the copy would not be exact"));
  }
  if (shown->rows.size() < warnings) {
    // Some warnings were not listed: one of them may be a changed value.
    return absl::DataLossError(absl::StrCat(
        where(), ": the target ", target.peer(), " reported ", warnings, " warnings but listed ",
        shown->rows.size(), "; the copy cannot be shown exact (raise max_error_count on the "
        "target or lower copy_batch_bytes)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<CopyResult> RangeCopier::CopyText(const protocol::TextRows& rows,
                                                 TargetSession& target, size_t batch_bytes,
                                                 Write write,
                                                 const std::function<std::string()>& where) const {
  // Its literals are written with backslash escapes (sql_literal.h); the
  // session may have copied by bound values before.
  if (absl::Status s = target.SetStringLiterals(true); !s.ok()) {
    return Annotate(s, absl::StrCat(where(), ", setting sql_mode on ", target.peer()));
  }
  const std::string& head = head_[static_cast<int>(write)];
  CopyResult result{.rows = rows.size(), .bytes = rows.value_bytes()};
  std::string stmt = head;
  size_t in_stmt = 0;
  auto flush = [&]() -> absl::Status {
    if (in_stmt == 0) return absl::OkStatus();
    uint16_t warnings = 0;
    absl::Status s = target.Execute(stmt, &warnings);
    if (!s.ok()) return Annotate(s, absl::StrCat(where(), ", writing ", target.peer()));
    BR_RETURN_IF_ERROR(CheckWarnings(target, warnings, where, &result));
    stmt.resize(head.size());
    in_stmt = 0;
    return absl::OkStatus();
  };
  std::string row_sql;
  for (size_t r = 0; r < rows.size(); ++r) {
    row_sql.assign("(");
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (i > 0) row_sql.push_back(',');
      const std::optional<std::string_view> value = rows.Get(r, i);
      if (!value) {
        row_sql.append("NULL");
        continue;
      }
      const std::string_view v = *value;
      switch (columns_[i].form) {
        case Form::kNumber:
          if (!LooksNumeric(v)) return NotANumber(where, i, v);
          // "-0" would be the integer 0: a DOUBLE's negative zero is -0e0.
          row_sql.append(v == "-0" && columns_[i].number == Number::kDouble ? "-0e0" : v);
          break;
        case Form::kQuoted:
          AppendQuotedString(v, &row_sql);
          break;
        case Form::kBytes:
          AppendIntroducedString(v, columns_[i].charset, &row_sql);
          break;
        case Form::kHex:
          if (!columns_[i].charset.empty()) {
            absl::StrAppend(&row_sql, "_", columns_[i].charset, " ");
          }
          if (v.empty()) {
            row_sql.append("''");
          } else {
            if (v.find_first_not_of("0123456789ABCDEF") != std::string::npos) {
              return NotHex(where, i);
            }
            absl::StrAppend(&row_sql, "X'", AV(v), "'");
          }
          break;
      }
    }
    row_sql.push_back(')');
    if (in_stmt > 0 &&
        (stmt.size() + 1 + row_sql.size() > batch_bytes || in_stmt >= kMaxBatchRows)) {
      BR_RETURN_IF_ERROR(flush());
    }
    if (in_stmt > 0) stmt.push_back(',');
    stmt.append(row_sql);
    ++in_stmt;
  }
  BR_RETURN_IF_ERROR(flush());
  return result;
}

absl::Status RangeCopier::AddBulkRow(const protocol::TextRows& rows, size_t row,
                                     const std::function<std::string()>& where,
                                     protocol::BulkExecuteBuilder* bulk,
                                     std::string* unhex) const {
  for (size_t i = 0; i < columns_.size(); ++i) {
    const std::optional<std::string_view> value = rows.Get(row, i);
    if (!value) {
      bulk->AddNull();
      continue;
    }
    const std::string_view v = *value;
    const Column& c = columns_[i];
    switch (c.form) {
      case Form::kNumber:
        switch (c.number) {
          case Number::kSigned: {
            int64_t n = 0;
            if (!ParseWhole(v, &n)) return NotANumber(where, i, v);
            BR_RETURN_IF_ERROR(bulk->AddInt(n));
            break;
          }
          case Number::kUnsigned: {
            uint64_t n = 0;
            if (!ParseWhole(v, &n)) return NotANumber(where, i, v);
            BR_RETURN_IF_ERROR(bulk->AddUnsigned(n));
            break;
          }
          case Number::kDouble: {
            // The server's round-trip text; from_chars rounds correctly,
            // as the server's own parser of the text path does.
            double d = 0;
            if (!ParseWhole(v, &d)) return NotANumber(where, i, v);
            BR_RETURN_IF_ERROR(bulk->AddDouble(d));
            break;
          }
          case Number::kDecimal:
            if (!LooksNumeric(v)) return NotANumber(where, i, v);
            BR_RETURN_IF_ERROR(bulk->AddDecimalText(v));
            break;
        }
        break;
      case Form::kQuoted:
        BR_RETURN_IF_ERROR(bulk->AddString(v));
        break;
      case Form::kBytes:
        BR_RETURN_IF_ERROR(bulk->AddBlob(v));
        break;
      case Form::kHex:
        if (v.size() % 2 != 0 || v.find_first_not_of("0123456789ABCDEF") != std::string::npos) {
          return NotHex(where, i);
        }
        *unhex = absl::HexStringToBytes(AV(v));
        BR_RETURN_IF_ERROR(c.as_text ? bulk->AddString(*unhex) : bulk->AddBlob(*unhex));
        break;
    }
  }
  return bulk->EndRow();
}

absl::StatusOr<CopyResult> RangeCopier::CopyBulk(const protocol::TextRows& rows,
                                                 TargetSession& target, size_t batch_bytes,
                                                 Write write, bool execute,
                                                 const std::function<std::string()>& where) const {
  // Every value is bound: MySQL then logs the strings without escaping
  // them (target_session.h). (MariaDB's bulk command is not measured to
  // gain: left as it is.)
  if (execute) {
    if (absl::Status s = target.SetStringLiterals(false); !s.ok()) {
      return Annotate(s, absl::StrCat(where(), ", setting sql_mode on ", target.peer()));
    }
  }
  CopyResult result{.rows = rows.size(), .bytes = rows.value_bytes()};
  const auto params = static_cast<uint16_t>(columns_.size());
  const std::string& one_row = bulk_head_[static_cast<int>(write)];
  protocol::BulkExecuteBuilder bulk_rows;
  std::string unhex;
  if (execute) {
    // The execute command's types and NULL bitmap (about 1.2 bytes per
    // marker) are larger than the bulk command's indicators.
    const size_t slack = kMaxExecuteMarkers + kMaxExecuteMarkers / 8 + 64;
    if (batch_bytes > 2 * slack) batch_bytes -= slack;
  }
  const size_t full = ExecuteRowsPerStatement(params, kMaxBatchRows);
  std::map<size_t, std::string> statements;  // execute: by rows
  bulk_rows.Start(0, params);
  auto flush = [&]() -> absl::Status {
    if (bulk_rows.rows() == 0) return absl::OkStatus();
    for (size_t first = 0, k; first < bulk_rows.rows(); first += k) {
      uint16_t warnings = 0;
      absl::Status s;
      if (execute) {
        k = NextExecutePiece(bulk_rows.rows() - first, full);
        auto it = statements.find(k);
        if (it == statements.end()) it = statements.emplace(k, MultiRowStatement(one_row, k)).first;
        s = target.ExecuteRows(it->second, bulk_rows, first, k, &warnings);
      } else {
        k = bulk_rows.rows();
        s = target.ExecuteBulk(one_row, bulk_rows, &warnings);
      }
      if (!s.ok()) return Annotate(s, absl::StrCat(where(), ", writing ", target.peer()));
      // SHOW WARNINGS lists the last statement's: checked after each.
      BR_RETURN_IF_ERROR(CheckWarnings(target, warnings, where, &result));
    }
    bulk_rows.Start(0, params);
    return absl::OkStatus();
  };
  for (size_t row = 0; row < rows.size(); ++row) {
    const protocol::BulkExecuteBuilder::Mark before = bulk_rows.mark();
    BR_RETURN_IF_ERROR(AddBulkRow(rows, row, where, &bulk_rows, &unhex));
    if (bulk_rows.rows() > 1 &&
        (bulk_rows.size() > batch_bytes || bulk_rows.rows() > kMaxBatchRows)) {
      // The command is full without this row: send it, then start the
      // next with the row.
      bulk_rows.TruncateTo(before);
      BR_RETURN_IF_ERROR(flush());
      BR_RETURN_IF_ERROR(AddBulkRow(rows, row, where, &bulk_rows, &unhex));
    }
  }
  BR_RETURN_IF_ERROR(flush());
  return result;
}

}  // namespace binrelay::apply
