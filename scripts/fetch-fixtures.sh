#!/usr/bin/env bash
# Downloads the recorded MySQL/MariaDB fixtures the tests read into .fixtures/
# (git-ignored), from the public repositories and commits tests/fixtures/MANIFEST
# names, and checks every file's sha256. Files already there with the right hash
# are left alone, so running it again only fetches what is missing or wrong.
#
# Usage: ./scripts/fetch-fixtures.sh [--dest DIR] [--manifest FILE]
#   --dest DIR       where to put the files (default: .fixtures/ at the repo root)
#   --manifest FILE  the list to fetch (default: tests/fixtures/MANIFEST)
# Environment:
#   BINRELAY_FIXTURES_ORIGIN  where to fetch from instead of
#       https://raw.githubusercontent.com: a local directory laid out as
#       OWNER/REPO/COMMIT/PATH (e.g. to work offline), or a URL with that layout.
# Needs curl (unless the origin is a directory), python3 for the files made from
# a zip or JSON upstream file, and sha256sum or shasum.
# Exits non-zero, naming each file, if any download, conversion or hash check fails.
set -euo pipefail
repo_root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$repo_root/.fixtures"
manifest="$repo_root/tests/fixtures/MANIFEST"
derive="$repo_root/scripts/fixtures-derive.py"
origin="${BINRELAY_FIXTURES_ORIGIN:-https://raw.githubusercontent.com}"

usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; }
while (($#)); do
  case "$1" in
    --dest) [ $# -ge 2 ] || { usage >&2; exit 2; }; dest="$2"; shift 2 ;;
    --dest=*) dest="${1#--dest=}"; shift ;;
    --manifest) [ $# -ge 2 ] || { usage >&2; exit 2; }; manifest="$2"; shift 2 ;;
    --manifest=*) manifest="${1#--manifest=}"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "fetch-fixtures: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[ -r "$manifest" ] || { echo "fetch-fixtures: cannot read manifest $manifest" >&2; exit 2; }

if command -v sha256sum >/dev/null; then
  sha256() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null; then
  sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
  echo "fetch-fixtures: needs sha256sum or shasum" >&2; exit 2
fi

case "$origin" in
  http://*|https://*|file://*) origin_kind=url; origin="${origin%/}" ;;
  *) origin_kind=dir
     [ -d "$origin" ] || { echo "fetch-fixtures: BINRELAY_FIXTURES_ORIGIN=$origin is not a directory" >&2; exit 2; } ;;
esac
if [ "$origin_kind" = url ] && ! command -v curl >/dev/null; then
  echo "fetch-fixtures: needs curl to download from $origin" >&2; exit 2
fi

mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/fetch-fixtures.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# Upstream files, each fetched once per run (the zip and JSON sources serve
# two fixtures each). Prints the local path of the upstream bytes.
upstream_file() {  # repo commit path
  local key
  key="$(printf '%s' "$1/$2/$3" | tr '/' '%')"
  local out="$work/up/$key"
  if [ ! -f "$out" ]; then
    mkdir -p "$work/up"
    if [ "$origin_kind" = dir ]; then
      local src="$origin/$1/$2/$3"
      [ -f "$src" ] || { echo "not in origin: $src" >&2; return 1; }
      cp "$src" "$out.part"
    else
      curl -fsSL --retry 3 --connect-timeout 20 --max-time 300 -o "$out.part" "$origin/$1/$2/$3" ||
        { echo "download failed: $origin/$1/$2/$3" >&2; rm -f "$out.part"; return 1; }
    fi
    mv "$out.part" "$out"
  fi
  printf '%s\n' "$out"
}

failures=()
fetched=0 present=0 total=0 line_no=0 download_failures_in_a_row=0
while IFS= read -r line || [ -n "$line" ]; do
  line_no=$((line_no + 1))
  case "$line" in ''|'#'*) continue ;; esac
  read -r path repo commit upstream sha how extra <<<"$line"
  if [ -z "$how" ] || [ -n "${extra:-}" ] || [[ "$path" == /* || "$path" == *..* ]]; then
    echo "fetch-fixtures: $manifest:$line_no: malformed line" >&2; exit 2
  fi
  total=$((total + 1))
  target="$dest/$path"
  if [ -f "$target" ] && [ "$(sha256 "$target")" = "$sha" ]; then
    present=$((present + 1))
    continue
  fi
  [ -e "$target" ] && echo "fetch-fixtures: $path: present with another sha256, fetching it again"
  from="$repo@$commit:$upstream"
  if ((download_failures_in_a_row >= 5)); then
    echo "fetch-fixtures: FAILED $path: not tried, the last 5 downloads failed ($from)" >&2
    failures+=("$path"); continue
  fi
  if ! up="$(upstream_file "$repo" "$commit" "$upstream" 2>"$work/err")"; then
    echo "fetch-fixtures: FAILED $path: $(tr '\n' ' ' <"$work/err")($from)" >&2
    failures+=("$path"); download_failures_in_a_row=$((download_failures_in_a_row + 1)); continue
  fi
  download_failures_in_a_row=0
  made="$work/made"
  rm -f "$made"
  if [ "$how" = copy ]; then
    cp "$up" "$made"
  elif ! python3 "$derive" "$how" "$up" "$made" 2>"$work/err"; then
    echo "fetch-fixtures: FAILED $path: cannot make it ($how): $(tr '\n' ' ' <"$work/err")($from)" >&2
    failures+=("$path"); continue
  fi
  got="$(sha256 "$made")"
  if [ "$got" != "$sha" ]; then
    echo "fetch-fixtures: FAILED $path: sha256 mismatch: expected $sha, got $got ($how from $from)" >&2
    failures+=("$path"); continue
  fi
  mkdir -p "$(dirname "$target")"
  mv "$made" "$target.part.$$"
  mv "$target.part.$$" "$target"
  fetched=$((fetched + 1))
  echo "fetch-fixtures: $path"
done <"$manifest"

echo "fetch-fixtures: $total files in $dest: $fetched fetched, $present already present, ${#failures[@]} failed"
if ((${#failures[@]})); then
  printf 'fetch-fixtures: FAILED: %s\n' "${failures[@]}" >&2
  exit 1
fi
