// The every-type table: one column of each type with edge values (minimums,
// maximums, odd cases, other values), shared by the tests that prove a value
// survives decoding (tail) and applying (apply pipelines). Columns() and its
// value lists are what MariaDB 10.11 and MySQL have in common;
// EveryTypeColumns(flavour) adds the types only some releases have.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/harness/json_lite.h"
#include "tests/harness/server_flavour.h"

namespace binrelay::testing {

// How a column's JSON value is checked against SELECT's text.
enum class Kind {
  kInt,     // JSON number, digits identical to SELECT's
  kYear,    // JSON number, same integer as SELECT's (0000 -> 0)
  kFloat,   // JSON number, same float after parsing both
  kDouble,  // JSON number, same double after parsing both
  kText,    // JSON string identical to SELECT's (utf8mb4 session)
  kBytes,   // JSON base64 whose bytes' HEX equals SELECT's hex expression
};

struct Column {
  const char* name;
  const char* type;
  Kind kind;
  // SELECT expression for the snapshot; empty means the column itself.
  std::string select = "";
};

inline std::vector<Column> Columns() {
  return {
      {"ti", "TINYINT", Kind::kInt},
      {"tiu", "TINYINT UNSIGNED", Kind::kInt},
      {"si", "SMALLINT", Kind::kInt},
      {"siu", "SMALLINT UNSIGNED", Kind::kInt},
      {"mi", "MEDIUMINT", Kind::kInt},
      {"miu", "MEDIUMINT UNSIGNED", Kind::kInt},
      {"i", "INT", Kind::kInt},
      {"iu", "INT UNSIGNED", Kind::kInt},
      {"bi", "BIGINT", Kind::kInt},
      {"biu", "BIGINT UNSIGNED", Kind::kInt},
      {"f", "FLOAT", Kind::kFloat},
      {"d", "DOUBLE", Kind::kDouble},
      {"dec65", "DECIMAL(65,30)", Kind::kText},
      {"dec10", "DECIMAL(10,2)", Kind::kText},
      {"dt", "DATE", Kind::kText},
      {"dtm", "DATETIME(6)", Kind::kText},
      {"dtm0", "DATETIME", Kind::kText},
      {"ts", "TIMESTAMP(3) NULL DEFAULT NULL", Kind::kText},
      {"tm6", "TIME(6)", Kind::kText},
      {"tm", "TIME", Kind::kText},
      {"yr", "YEAR", Kind::kYear},
      {"ch", "CHAR(10) CHARACTER SET utf8mb4", Kind::kText},
      // 400 bytes max: the binlog uses a 2-byte length for this CHAR.
      {"ch100", "CHAR(100) CHARACTER SET utf8mb4", Kind::kText},
      {"vc", "VARCHAR(20) CHARACTER SET latin1", Kind::kText},
      {"tx", "TEXT", Kind::kText},
      {"mtx", "MEDIUMTEXT", Kind::kText},
      {"bn", "BINARY(8)", Kind::kBytes, "HEX(bn)"},
      {"vb", "VARBINARY(16)", Kind::kBytes, "HEX(vb)"},
      {"tb", "TINYBLOB", Kind::kBytes, "HEX(tb)"},
      {"bl", "BLOB", Kind::kBytes, "HEX(bl)"},
      {"lb", "LONGBLOB", Kind::kBytes, "HEX(lb)"},
      {"en", "ENUM('red','green','blue')", Kind::kText},
      {"st",
       "SET('m01','m02','m03','m04','m05','m06','m07','m08','m09','m10','m11','m12','m13',"
       "'m14','m15','m16','m17','m18','m19','m20')",
       Kind::kText},
      // HEX() of a BIT is the number's hex; SELECT returns ceil(n/8) bytes.
      {"b1", "BIT(1)", Kind::kBytes, "LPAD(HEX(b1), 2, '0')"},
      {"b64", "BIT(64)", Kind::kBytes, "LPAD(HEX(b64), 16, '0')"},
      {"geo", "GEOMETRY", Kind::kBytes, "HEX(geo)"},
      {"pt", "POINT", Kind::kBytes, "HEX(pt)"},
      {"js", "JSON", Kind::kText},
  };
}

// Value sets, one SQL literal per column of Columns() (in order).
inline const std::vector<std::string> kMins = {
    "-128", "0", "-32768", "0", "-8388608", "0", "-2147483648", "0",
    "-9223372036854775808", "0", "-3.40282e38", "-1.7976931348623157e308",
    "'-99999999999999999999999999999999999.999999999999999999999999999999'", "-99999999.99",
    "'0000-00-00'", "'0000-00-00 00:00:00.000000'", "'0000-00-00 00:00:00'",
    "'1970-01-01 00:00:01.000'", "'-838:59:59.000000'", "'-838:59:59'", "0",
    "'\xF0\x9F\x98\x80" "abc'", "'\xF0\x9F\x98\x80\xF0\x9F\x98\x80 tail'", "'caf\xC3\xA9'", "''",
    "'m'", "'ab'", "X'00'", "''", "X'00FF'", "'z'", "'red'", "''", "b'0'", "b'0'",
    "ST_GeomFromText('POINT(0 0)')", "ST_GeomFromText('POINT(-1.5 2.25)')", "'{}'"};
inline const std::vector<std::string> kMaxes = {
    "127", "255", "32767", "65535", "8388607", "16777215", "2147483647", "4294967295",
    "9223372036854775807", "18446744073709551615", "3.40282e38", "1.7976931348623157e308",
    "'99999999999999999999999999999999999.999999999999999999999999999999'", "99999999.99",
    "'9999-12-31'", "'9999-12-31 23:59:59.999999'", "'9999-12-31 23:59:59'",
    "'2038-01-19 03:14:07.999'", "'838:59:59.000000'", "'838:59:59'", "2155",
    "'\xC3\xB1" "and\xC3\xBA'", "REPEAT('\xE2\x82\xAC', 100)", "'\xC3\xA9'",
    "REPEAT('text ', 300)", "REPEAT('\xC3\xA9', 70000)", "X'61620000'", "X'FF00FF'",
    "X'0102030405'", "REPEAT(X'DEADBEEF', 1000)", "REPEAT(X'00FF7F80', 20000)", "'blue'",
    "'m01,m05,m10,m20'", "b'1'", "b'1111111111111111111111111111111111111111111111111111111111111111'",
    "ST_GeomFromText('POLYGON((0 0,10 0,10 10,0 10,0 0))')",
    "ST_GeomFromText('POINT(1e300 -1e-300)')",
    "'{\"a\":[1,2.5,\"x\\\\u00e9\"],\"b\":null,\"c\":{\"d\":true}}'"};
inline const std::vector<std::string> kMisc = {
    "0", "1", "-1", "1", "-1", "1", "-1", "1", "-1", "9223372036854775808", "1.1", "0.1",
    "'0.000000000000000000000000000001'", "-0.01", "'2024-02-29'",
    "'2024-02-29 12:34:56.000001'", "'2000-01-01 00:00:00'", "'2024-02-29 12:34:56.789'",
    "'-00:00:01.500000'", "'00:00:00'", "1901", "'a'", "' lead'", "''", "'line1\\nline2\\t\"q\"'",
    "''", "X'0000000000000000'", "''", "X'00'", "''", "''", "'green'",
    "'m01,m02,m03,m04,m05,m06,m07,m08,m09,m10,m11,m12,m13,m14,m15,m16,m17,m18,m19,m20'",
    "b'1'", "b'1000000000000000000000000000000000000000000000000000000000000001'",
    "ST_GeomFromText('LINESTRING(0 0,1 1,2 0)')", "ST_GeomFromText('POINT(0 -0.5)')",
    "'[1, \"two\", 3.0e0]'"};
inline const std::vector<std::string> kOther = {
    "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "-2.5", "-0.000123456789",
    "'123.456'", "0.00", "'1000-01-01'", "'1000-01-01 00:00:00.000000'",
    "'1999-12-31 23:59:59'", "'0000-00-00 00:00:00.000'", "'12:34:56.000010'", "'-01:00:00'",
    "1999", "''", "''", "'x'", "'\xF0\x9F\x8E\x89'", "'y'", "X'0000000000000001'",
    "X'000000'", "X'FF'", "X'FFFE'", "X'00'", "'red'", "'m20'", "b'0'",
    "b'0000000000000000000000000000000000000000000000000000000000000010'",
    "ST_GeomFromText('POINT(3 4)')", "ST_GeomFromText('POINT(5 6)')", "'\"str\"'"};

inline std::string RowValues(int id, const std::vector<std::string>& values) {
  return absl::StrCat("(", id, ", ", absl::StrJoin(values, ", "), ")");
}

inline std::string SetClause(const std::vector<std::string>& values) {
  const std::vector<Column> cols = Columns();
  std::vector<std::string> parts;
  for (size_t i = 0; i < cols.size(); ++i) {
    parts.push_back(absl::StrCat(cols[i].name, " = ", values[i]));
  }
  return absl::StrJoin(parts, ", ");
}


// CREATE TABLE db.table (id INT PRIMARY KEY, <every column>).
inline std::string EveryTypeTableDdl(const std::string& qualified) {
  std::vector<std::string> defs = {"id INT PRIMARY KEY"};
  for (const Column& c : Columns()) defs.push_back(absl::StrCat(c.name, " ", c.type));
  return absl::StrCat("CREATE TABLE ", qualified, " (", absl::StrJoin(defs, ", "),
                      ") ENGINE=InnoDB");
}

// Every column type of one release, each with four values (the lists
// above, then the types only some releases have), for the live tests that
// run against every flavour.
struct LiveColumn {
  Column column;
  std::vector<std::string> values;  // minimum, maximum, odd case, other
};

inline std::vector<LiveColumn> EveryTypeColumns(const ServerFlavour& f) {
  std::vector<LiveColumn> out;
  const std::vector<Column> base = Columns();
  for (size_t i = 0; i < base.size(); ++i) {
    out.push_back({base[i], {kMins[i], kMaxes[i], kMisc[i], kOther[i]}});
  }
  auto add = [&out](Column c, std::vector<std::string> values) {
    out.push_back({std::move(c), std::move(values)});
  };
  // Fractional seconds of every width class (the binlog packs 1-2, 3-4 and
  // 5-6 digits into 1, 2 and 3 bytes).
  add({"dt2", "DATETIME(2)", Kind::kText},
      {"'1000-01-01 00:00:00.00'", "'9999-12-31 23:59:59.99'", "'2024-02-29 12:34:56.01'",
       "'1970-01-01 00:00:00.50'"});
  add({"tm3", "TIME(3)", Kind::kText},
      {"'-838:59:59.000'", "'838:59:59.000'", "'-00:00:00.001'", "'12:34:56.789'"});
  add({"ts5", "TIMESTAMP(5) NULL DEFAULT NULL", Kind::kText},
      {"'1970-01-01 00:00:01.00000'", "'2038-01-19 03:14:07.99999'",
       "'2024-02-29 12:34:56.00001'", "'2000-01-01 00:00:00.12345'"});
  if (f.mysql) {
    // MySQL 9.0: VECTOR(n), n float32 values; SELECT returns their bytes.
    add({"vec", "VECTOR(3)", Kind::kBytes, "HEX(vec)"},
        {"STRING_TO_VECTOR('[0,0,0]')", "STRING_TO_VECTOR('[3.0e38,-3.0e38,1e-30]')",
         "STRING_TO_VECTOR('[1,2.5,-3]')", "STRING_TO_VECTOR('[0.1,0.2,0.3]')"});
    return out;
  }
  // MariaDB's data-type plugins: SELECT prints their text.
  add({"i6", "INET6", Kind::kText},
      {"'::'", "'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'", "'::ffff:1.2.3.4'",
       "'2001:db8::1:0:0:1'"});
  if (f.AtLeast(10, 7)) {
    add({"uu", "UUID", Kind::kText},
        {"'00000000-0000-0000-0000-000000000000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'",
         // A time-based (v1) UUID, which MariaDB stores with its segments
         // swapped, and a v7 one, which it stores as given.
         "'123e4567-e89b-12d3-a456-426614174000'", "'01234567-89ab-7def-8123-456789abcdef'"});
  }
  if (f.AtLeast(10, 10)) {
    add({"i4", "INET4", Kind::kText},
        {"'0.0.0.0'", "'255.255.255.255'", "'10.0.0.1'", "'192.168.1.254'"});
  }
  // MariaDB 10.3+: columns compressed in the row and in the binlog.
  add({"cvc", "VARCHAR(1000) COMPRESSED", Kind::kText},
      {"''", "REPEAT('compressible ', 80)", "'short'", "REPEAT('\xC3\xA9', 300)"});
  add({"cbl", "BLOB COMPRESSED", Kind::kBytes, "HEX(cbl)"},
      {"''", "REPEAT(X'00FF', 4000)", "X'01'", "REPEAT('abc', 1000)"});
  if (f.AtLeast(11, 7)) {
    add({"vec", "VECTOR(3)", Kind::kBytes, "HEX(vec)"},
        {"VEC_FromText('[0,0,0]')", "VEC_FromText('[3.0e38,-3.0e38,1e-30]')",
         "VEC_FromText('[1,2.5,-3]')", "VEC_FromText('[0.1,0.2,0.3]')"});
  }
  return out;
}

// (id, value `which` of every column).
inline std::string LiveRowValues(int id, const std::vector<LiveColumn>& cols, size_t which) {
  std::vector<std::string> v;
  for (const LiveColumn& c : cols) v.push_back(which < c.values.size() ? c.values[which] : "NULL");
  return absl::StrCat("(", id, ", ", absl::StrJoin(v, ", "), ")");
}

// col = value `which`, ... (NULL for every column when which is past the values).
inline std::string LiveSetClause(const std::vector<LiveColumn>& cols, size_t which) {
  std::vector<std::string> parts;
  for (const LiveColumn& c : cols) {
    parts.push_back(absl::StrCat(c.column.name, " = ",
                                 which < c.values.size() ? c.values[which] : "NULL"));
  }
  return absl::StrJoin(parts, ", ");
}

inline std::string LiveTableDdl(const std::string& qualified, const std::vector<LiveColumn>& cols) {
  std::vector<std::string> defs = {"id INT PRIMARY KEY"};
  for (const LiveColumn& c : cols) defs.push_back(absl::StrCat(c.column.name, " ", c.column.type));
  return absl::StrCat("CREATE TABLE ", qualified, " (", absl::StrJoin(defs, ", "),
                      ") ENGINE=InnoDB");
}

// Checks one JSON value of `binrelay tail` against SELECT's text for the
// same column (its `select` expression); "" when they agree, else what
// differs.
inline std::string CompareWithSelect(const Column& col, const JsonValue& v,
                                     const std::optional<std::string>& want) {
  if (!want.has_value()) return v.is_null() ? "" : "expected null";
  if (v.is_null()) return absl::StrCat("got null, expected ", *want);
  switch (col.kind) {
    case Kind::kInt:
      if (!v.is_number()) return "not a JSON number";
      return v.text == *want ? "" : absl::StrCat("got ", v.text, ", SELECT ", *want);
    case Kind::kYear:
      if (!v.is_number()) return "not a JSON number";
      return std::strtoll(v.text.c_str(), nullptr, 10) == std::strtoll(want->c_str(), nullptr, 10)
                 ? ""
                 : absl::StrCat("got ", v.text, ", SELECT ", *want);
    case Kind::kFloat:
      if (!v.is_number()) return "not a JSON number";
      return std::strtof(v.text.c_str(), nullptr) == std::strtof(want->c_str(), nullptr)
                 ? ""
                 : absl::StrCat("got ", v.text, ", SELECT ", *want, " (as float)");
    case Kind::kDouble:
      if (!v.is_number()) return "not a JSON number";
      return std::strtod(v.text.c_str(), nullptr) == std::strtod(want->c_str(), nullptr)
                 ? ""
                 : absl::StrCat("got ", v.text, ", SELECT ", *want, " (as double)");
    case Kind::kText:
      if (!v.is_string()) return "not a JSON string";
      return v.text == *want ? "" : absl::StrCat("got \"", v.text, "\", SELECT \"", *want, "\"");
    case Kind::kBytes: {
      if (!v.is_string()) return "not a JSON string";
      absl::StatusOr<std::string> bytes = Base64Decode(v.text);
      if (!bytes.ok()) return absl::StrCat("bad base64: ", bytes.status().message());
      std::string hex = ToHex(*bytes);
      if (hex == *want) return "";
      return absl::StrCat("got hex ", hex.substr(0, 80), " (", bytes->size(), " bytes), SELECT ",
                          want->substr(0, 80), " (", want->size() / 2, " bytes)");
    }
  }
  return "unknown kind";
}

}  // namespace binrelay::testing
