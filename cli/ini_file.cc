#include "cli/ini_file.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/shown_argument.h"
#include "protocol/status_macros.h"

namespace binrelay::cli {

namespace {

// A normalized key, or with `dots` a section name ([apply.orders]).
bool IsName(std::string_view name, bool dots = false) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || (dots && c == '.'))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string IniFile::Normalize(std::string_view key) {
  std::string k = absl::AsciiStrToLower(AV(key));
  for (char& c : k) {
    if (c == '-') c = '_';
  }
  return k;
}

absl::StatusOr<IniFile> IniFile::Parse(std::string_view text, std::string_view name) {
  IniFile ini;
  std::string section;
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(AV(text), '\n')) {
    ++line_no;
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    std::string where = absl::StrCat(AV(name), ":", line_no);
    // Errors about a line never quote it whole: a misplaced or mistyped
    // line may hold a password. They show the key (the text before '=').
    if (line[0] == '[') {
      if (line.back() != ']' || line.size() < 3) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": malformed section header (expected [name] alone on its line)"));
      }
      section = Normalize(std::string_view(line.data() + 1, line.size() - 2));
      continue;
    }
    size_t eq = line.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": expected key = value (the line has no '='; its text is not shown)"));
    }
    std::string key = Normalize(SV(absl::StripAsciiWhitespace(line.substr(0, eq))));
    // Text that is not a key name (e.g. "password s3cret==" missing its '=')
    // is never echoed, in this error or in later ones that name keys.
    if (!IsName(key)) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": malformed key (letters, digits, '_' and '-' only; its text is not shown)"));
    }
    if (section.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": key '", key, "' appears before any [section]"));
    }
    absl::string_view value = absl::StripAsciiWhitespace(line.substr(eq + 1));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    } else {
      // An unquoted value ends at a comment that follows whitespace.
      size_t hash = value.find(" #");
      if (hash != absl::string_view::npos) value = absl::StripAsciiWhitespace(value.substr(0, hash));
    }
    auto k = std::make_pair(section, key);
    if (ini.values_.contains(k)) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": [", section, "] ", key,
                                                     " is set twice (first at ",
                                                     ini.values_[k].origin, ")"));
    }
    ini.values_[k] = Value{std::string(value), where};
  }
  return ini;
}

absl::StatusOr<IniFile> IniFile::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read configuration file ", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return Parse(ss.str(), path);
}

absl::Status IniFile::Override(std::string_view flag) {
  absl::string_view f = AV(flag);
  // A malformed flag may still carry a password: errors show ShownArgument.
  const std::string shown = ShownArgument(flag);
  if (!absl::ConsumePrefix(&f, "--")) {
    return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", shown, "'"));
  }
  // Keys have no dots; sections may ([apply.orders]): split at the last one.
  size_t eq = f.find('=');
  size_t dot = f.substr(0, eq).rfind('.');
  if (dot == absl::string_view::npos || eq == absl::string_view::npos || dot > eq || dot == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad option '", shown, "': expected --section.key=value, e.g. --store.dir=/x"));
  }
  std::string section = Normalize(SV(f.substr(0, dot)));
  std::string key = Normalize(SV(f.substr(dot + 1, eq - dot - 1)));
  if (!IsName(key) || !IsName(section, /*dots=*/true)) {
    return absl::InvalidArgumentError(
        "bad option: malformed section or key name (its text is not shown); expected "
        "--section.key=value, e.g. --store.dir=/x");
  }
  if (absl::EndsWith(key, "password")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", section, ".", key, "=... is not accepted (a password on the command line is "
        "visible in ps): set ", key, "_file, or ", key, " in the configuration file"));
  }
  values_[{section, key}] =
      Value{std::string(f.substr(eq + 1)), absl::StrCat("--", section, ".", key)};
  return absl::OkStatus();
}

std::vector<std::string> IniFile::SectionsWithPrefix(std::string_view prefix) const {
  std::vector<std::string> out;
  for (const auto& [key, value] : values_) {
    const std::string& section = key.first;
    if (section.compare(0, prefix.size(), prefix) == 0 &&
        (out.empty() || out.back() != section)) {
      out.push_back(section);
    }
  }
  return out;
}

const IniFile::Value* IniFile::Find(std::string_view section, std::string_view key) const {
  auto k = std::make_pair(Normalize(section), Normalize(key));
  auto it = values_.find(k);
  read_[k] = true;
  return it == values_.end() ? nullptr : &it->second;
}

std::vector<std::string> IniFile::UnreadKeys() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : values_) {
    if (!read_.contains(k)) out.push_back(absl::StrCat(v.origin, ": [", k.first, "] ", k.second));
  }
  return out;
}

}  // namespace binrelay::cli
