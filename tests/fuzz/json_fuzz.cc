// Fuzz target: MySQL binary JSON and JSON diffs. The input is split at its
// first 0xFF byte: a binary document (type byte + value) before it, a diff
// list after it. The document is printed; the diffs are parsed, printed and
// applied to the document's text; the printed text is parsed back to binary (the
// apply path's JSON writer) and printed again.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/json_binary.h"
#include "protocol/json_binary_writer.h"
#include "protocol/json_diff.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace binrelay::protocol;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t cut = in.find('\xff');
  const std::string_view doc = in.substr(0, cut);
  const std::string_view diffs_bytes = cut == std::string_view::npos ? "" : in.substr(cut + 1);

  std::string text;
  const bool printed = AppendJsonBinaryText(doc, &text).ok();
  std::vector<JsonDiff> diffs;
  if (ParseJsonDiffs(diffs_bytes, &diffs).ok()) {
    std::string diffs_text;
    (void)AppendJsonDiffsJson(diffs, &diffs_text);
    std::string patched;
    if (printed) (void)ApplyJsonDiffs(text, diffs, &patched);
  }
  if (printed) {
    std::string binary;
    if (EncodeJsonTextAsBinary(text, &binary).ok()) {
      std::string again;
      (void)AppendJsonBinaryText(binary, &again);
    }
  }
  // The input itself as JSON text.
  std::string binary;
  (void)EncodeJsonTextAsBinary(in, &binary);
  return 0;
}
