#include "protocol/json_diff.h"

#include "absl/strings/str_cat.h"
#include "protocol/json_binary.h"
#include "protocol/json_text_dom.h"
#include "protocol/json_writer.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

// One step of a JSON path: a member name or an array position.
struct Leg {
  bool is_key = false;
  std::string key;
  bool from_end = false;  // [last] / [last-N]
  uint64_t index = 0;     // position, or N for [last-N]
};

absl::Status PathError(std::string_view path, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported JSON path \"", AV(path), "\": ", AV(why)));
}

void SkipSpaces(std::string_view p, size_t* i) {
  while (*i < p.size() && p[*i] == ' ') ++*i;
}

bool ReadNumber(std::string_view p, size_t* i, uint64_t* v) {
  const size_t start = *i;
  *v = 0;
  while (*i < p.size() && p[*i] >= '0' && p[*i] <= '9' && *i - start < 18) {
    *v = *v * 10 + static_cast<uint64_t>(p[*i] - '0');
    ++*i;
  }
  return *i > start;
}

// Parses the path syntax MySQL writes in diffs: $ followed by .name,
// ."quoted name", [N], [last], [last-N]. No wildcards (never in diffs).
absl::Status ParsePath(std::string_view p, std::vector<Leg>* legs) {
  size_t i = 0;
  SkipSpaces(p, &i);
  if (i >= p.size() || p[i] != '$') return PathError(p, "must start with $");
  ++i;
  while (true) {
    SkipSpaces(p, &i);
    if (i >= p.size()) return absl::OkStatus();
    Leg leg;
    if (p[i] == '.') {
      ++i;
      SkipSpaces(p, &i);
      leg.is_key = true;
      if (i < p.size() && p[i] == '"') {
        // Quoted member: reuse the JSON string parser on the quoted token.
        size_t end = i + 1;
        while (end < p.size() && p[end] != '"') end += p[end] == '\\' ? 2 : 1;
        if (end >= p.size()) return PathError(p, "unterminated quoted member");
        JsonNode node;
        BR_RETURN_IF_ERROR(ParseJsonText(p.substr(i, end + 1 - i), &node));
        leg.key = std::move(node.text);
        i = end + 1;
      } else {
        const size_t start = i;
        while (i < p.size() && p[i] != '.' && p[i] != '[' && p[i] != ' ') ++i;
        if (i == start) return PathError(p, "empty member name");
        leg.key.assign(p.substr(start, i - start));
        if (leg.key == "*") return PathError(p, "wildcards are not allowed");
      }
    } else if (p[i] == '[') {
      ++i;
      SkipSpaces(p, &i);
      if (p.substr(i, 4) == "last") {
        i += 4;
        leg.from_end = true;
        SkipSpaces(p, &i);
        if (i < p.size() && p[i] == '-') {
          ++i;
          SkipSpaces(p, &i);
          if (!ReadNumber(p, &i, &leg.index)) return PathError(p, "bad [last-N]");
        }
      } else if (!ReadNumber(p, &i, &leg.index)) {
        return PathError(p, "bad array index");
      }
      SkipSpaces(p, &i);
      if (i >= p.size() || p[i] != ']') return PathError(p, "expected ]");
      ++i;
    } else {
      return PathError(p, "expected . or [");
    }
    legs->push_back(std::move(leg));
  }
}

absl::Status NotFound(const JsonDiff& d) {
  return absl::DataLossError(absl::StrCat("JSON diff path ", AV(d.path),
                                          " does not exist in the before-image document"));
}

// Array position of `leg` in an array of `size` elements; false if before 0.
bool Position(const Leg& leg, size_t size, uint64_t* pos) {
  if (!leg.from_end) {
    *pos = leg.index;
    return true;
  }
  if (leg.index + 1 > size) return false;
  *pos = size - 1 - leg.index;
  return true;
}

// The existing child of `node` that `leg` names, or nullptr.
JsonNode* Child(JsonNode* node, const Leg& leg) {
  if (leg.is_key) {
    if (node->kind != JsonNode::Kind::kObject) return nullptr;
    bool found;
    size_t i = FindKeySlot(*node, leg.key, &found);
    return found ? &node->items[i] : nullptr;
  }
  if (node->kind != JsonNode::Kind::kArray) return nullptr;
  uint64_t pos;
  if (!Position(leg, node->items.size(), &pos) || pos >= node->items.size()) return nullptr;
  return &node->items[pos];
}

absl::Status ValueNode(const JsonDiff& d, JsonNode* out) {
  std::string text;
  BR_RETURN_IF_ERROR(Annotate(AppendJsonBinaryText(d.value, &text),
                              absl::StrCat("value of JSON diff at ", AV(d.path))));
  return ParseJsonText(text, out);
}

absl::Status ApplyOne(JsonNode* root, const JsonDiff& d) {
  std::vector<Leg> legs;
  BR_RETURN_IF_ERROR(ParsePath(d.path, &legs));
  JsonNode value;
  if (d.op != JsonDiffOp::kRemove) BR_RETURN_IF_ERROR(ValueNode(d, &value));
  if (legs.empty()) {
    if (d.op != JsonDiffOp::kReplace) {
      return absl::DataLossError(absl::StrCat("JSON diff cannot insert/remove the root ($)"));
    }
    *root = std::move(value);
    return absl::OkStatus();
  }
  JsonNode* parent = root;
  for (size_t i = 0; i + 1 < legs.size(); ++i) {
    parent = Child(parent, legs[i]);
    if (parent == nullptr) return NotFound(d);
  }
  const Leg& last = legs.back();
  if (last.is_key) {
    if (parent->kind != JsonNode::Kind::kObject) return NotFound(d);
    bool found;
    const size_t slot = FindKeySlot(*parent, last.key, &found);
    if (d.op == JsonDiffOp::kRemove || d.op == JsonDiffOp::kReplace) {
      if (!found) return NotFound(d);
      if (d.op == JsonDiffOp::kRemove) {
        parent->keys.erase(parent->keys.begin() + slot);
        parent->items.erase(parent->items.begin() + slot);
      } else {
        parent->items[slot] = std::move(value);
      }
      return absl::OkStatus();
    }
    if (found) {
      parent->items[slot] = std::move(value);
    } else {
      parent->keys.insert(parent->keys.begin() + slot, last.key);
      parent->items.insert(parent->items.begin() + slot, std::move(value));
    }
    return absl::OkStatus();
  }
  if (parent->kind != JsonNode::Kind::kArray) return NotFound(d);
  auto& items = parent->items;
  uint64_t pos;
  if (!Position(last, items.size(), &pos)) return NotFound(d);
  if (d.op == JsonDiffOp::kInsert) {
    // Past the end appends, as JSON_ARRAY_INSERT does.
    items.insert(items.begin() + static_cast<ptrdiff_t>(std::min<uint64_t>(pos, items.size())),
                 std::move(value));
    return absl::OkStatus();
  }
  if (pos >= items.size()) return NotFound(d);
  if (d.op == JsonDiffOp::kRemove) {
    items.erase(items.begin() + static_cast<ptrdiff_t>(pos));
  } else {
    items[pos] = std::move(value);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseJsonDiffs(std::string_view bytes, std::vector<JsonDiff>* out) {
  out->clear();
  ByteCursor in(bytes);
  while (!in.empty()) {
    const size_t at = in.position();
    JsonDiff d;
    const uint8_t op = in.U8();
    if (op > 2) {
      return absl::DataLossError(
          absl::StrCat("unknown JSON diff operation ", op, " at byte ", at, " of the diff list"));
    }
    d.op = static_cast<JsonDiffOp>(op);
    d.path = in.LenencString();
    if (!in.ok()) return in.status("JSON diff path");
    if (d.path.empty()) return absl::DataLossError(absl::StrCat("empty JSON diff path at byte ", at));
    if (d.op != JsonDiffOp::kRemove) {
      d.value = in.LenencString();
      if (!in.ok()) return in.status("JSON diff value");
      if (d.value.empty()) {
        return absl::DataLossError(absl::StrCat("empty JSON diff value at byte ", at));
      }
    }
    out->push_back(d);
  }
  return absl::OkStatus();
}

absl::Status ReadJsonDiffColumn(ByteCursor& in, const ColumnDef& col, std::vector<JsonDiff>* out) {
  if (col.meta < 1 || col.meta > 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON column length-prefix size ", col.meta, " is not 1..4"));
  }
  const size_t at = in.position();
  const uint64_t n = in.Fixed(col.meta);
  if (!in.ok()) return in.status("JSON diff list length");
  if (n > in.remaining()) {
    return absl::OutOfRangeError(absl::StrCat("JSON diff list length ", n, " (prefix at byte ", at,
                                              ") exceeds the ", in.remaining(), " bytes left"));
  }
  return ParseJsonDiffs(in.Bytes(n), out);
}

absl::Status ApplyJsonDiffs(std::string_view document, const std::vector<JsonDiff>& diffs,
                            std::string* out) {
  JsonNode root;
  BR_RETURN_IF_ERROR(Annotate(ParseJsonText(document, &root), "JSON diff before-image"));
  for (const JsonDiff& d : diffs) BR_RETURN_IF_ERROR(ApplyOne(&root, d));
  out->clear();
  AppendJsonNode(root, out);
  return absl::OkStatus();
}

absl::Status AppendJsonDiffsJson(const std::vector<JsonDiff>& diffs, std::string* out) {
  static constexpr std::string_view kOps[] = {"replace", "insert", "remove"};
  out->push_back('[');
  for (size_t i = 0; i < diffs.size(); ++i) {
    const JsonDiff& d = diffs[i];
    if (i) out->append(", ");
    out->append("{\"op\": \"");
    out->append(kOps[static_cast<int>(d.op)]);
    out->append("\", \"path\": ");
    AppendJsonString(d.path, out);
    if (d.op != JsonDiffOp::kRemove) {
      out->append(", \"value\": ");
      BR_RETURN_IF_ERROR(AppendJsonBinaryText(d.value, out));
    }
    out->push_back('}');
  }
  out->push_back(']');
  return absl::OkStatus();
}

}  // namespace binrelay::protocol
