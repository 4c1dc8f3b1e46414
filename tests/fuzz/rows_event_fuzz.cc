// Fuzz target: one TABLE_MAP and one rows event built from the input, with
// no CRC to get wrong, so mutations reach the column metadata and every
// column value decoder (a binlog file's checksums stop most of them in
// binlog_stream_fuzz). The rows are decoded as tail prints them, split into
// images as the apply path keeps them, and each full image's values are
// rendered as SQL literals and encoded as primary keys (both encodings).
//
// Input: byte 0 picks the server flavour (bit 0: MariaDB) and the rows event
// type (bits 1-4); bytes 1-2 (little endian) are the TABLE_MAP body's length;
// then that body; the rest is the rows event's body.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "apply/ordered_key.h"
#include "apply/row_key.h"
#include "apply/sql_literal.h"
#include "protocol/column_type.h"
#include "protocol/event_header.h"
#include "protocol/event_type.h"
#include "protocol/format_description.h"
#include "protocol/row_decoder.h"
#include "protocol/row_image.h"
#include "protocol/rows_event.h"
#include "protocol/table_map.h"

namespace {

using namespace binrelay::protocol;

const FormatDescription& Format(bool mariadb) {
  static const FormatDescription* mysql = new FormatDescription(Mysql8FormatDescription());
  static const FormatDescription* maria = [] {
    auto* fd = new FormatDescription(Mysql8FormatDescription());
    fd->is_mariadb = true;
    fd->server_version = "10.11.6-MariaDB";
    // MariaDB's own event types (sql/log_event.h): QUERY_COMPRESSED 165,
    // rows compressed v1 166-168 (post-header 8), v2 169-171 (10).
    fd->post_header_len.resize(171, 0);
    fd->post_header_len[164] = 13;
    for (int t = 166; t <= 168; ++t) fd->post_header_len[t - 1] = 8;
    for (int t = 169; t <= 171; ++t) fd->post_header_len[t - 1] = 10;
    return fd;
  }();
  return mariadb ? *maria : *mysql;
}

constexpr uint8_t kRowsTypes[] = {
    kWriteRowsEvent, kUpdateRowsEvent, kDeleteRowsEvent, kPartialUpdateRowsEvent,
    kWriteRowsEventV1, kUpdateRowsEventV1, kDeleteRowsEventV1, kWriteRowsCompressedEvent,
    kUpdateRowsCompressedEvent, kDeleteRowsCompressedEvent, kWriteRowsCompressedEventV1,
    kUpdateRowsCompressedEventV1, kDeleteRowsCompressedEventV1};

std::string Event(uint8_t type, std::string_view body) {
  std::string ev(19, '\0');
  ev[4] = static_cast<char>(type);
  const uint32_t size = static_cast<uint32_t>(19 + body.size());
  for (int i = 0; i < 4; ++i) ev[9 + i] = static_cast<char>(size >> (8 * i));
  ev.append(body);
  return ev;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const bool mariadb = data[0] & 1;
  const uint8_t rows_type = kRowsTypes[(data[0] >> 1) % sizeof(kRowsTypes)];
  const size_t map_len = data[1] | (size_t{data[2]} << 8);
  std::string_view rest(reinterpret_cast<const char*>(data) + 3, size - 3);
  if (map_len > rest.size()) return 0;
  const FormatDescription& fd = Format(mariadb);

  const std::string map_event = Event(kTableMapEvent, rest.substr(0, map_len));
  auto map_view = MakeEventView(map_event, false, 4);
  if (!map_view.ok()) return 0;
  auto map = ParseTableMap(*map_view, fd);
  if (!map.ok()) return 0;
  TableDef& def = map->def;

  const std::string rows_event = Event(rows_type, rest.substr(map_len));
  auto rows_view = MakeEventView(rows_event, false, 4 + map_event.size());
  if (!rows_view.ok()) return 0;
  auto rows = ParseRowsEvent(*rows_view, fd);
  if (!rows.ok()) return 0;
  def.table_id = rows->table_id;
  std::vector<uint32_t> key;
  for (uint32_t i = 0; i < def.columns.size() && i < 2; ++i) key.push_back(i);
  def.primary_key = key;

  RowDecoder decoder;
  (void)decoder.Decode(*rows, def, [](const DecodedRow&) { return absl::OkStatus(); });

  RowImageSplitter splitter;
  binrelay::apply::KeyEncoder keys;
  std::string scratch, sql, encoded;
  (void)splitter.Split(*rows, def, [&](const RawRowImages& r) {
    for (const auto& [image, full] : {std::pair{r.before, r.before_full},
                                      std::pair{r.after, r.after_full}}) {
      if (image.empty() || !full) continue;
      for (ImageValues mode : {ImageValues::kText, ImageValues::kTemporalParts}) {
        sql.clear();
        (void)ForEachImageValue(image, def, &scratch, [&](size_t i, const ValueView* v) {
          binrelay::apply::AppendSqlLiteral(
              v, def.columns[i].type == kTypeBlob ? "" : "utf8mb4", &sql,
              i % 3 == 0 ? binrelay::apply::LiteralStyle::kDefault
                         : i % 3 == 1 ? binrelay::apply::LiteralStyle::kExactNumber
                                      : binrelay::apply::LiteralStyle::kBinaryString);
          return true;
        }, mode);
      }
      (void)keys.Encode(image, def, key, &encoded);
      (void)binrelay::apply::EncodeOrderedKey(image, def, key, &scratch, &encoded);
    }
    return absl::OkStatus();
  });
  return 0;
}
