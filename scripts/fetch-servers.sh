#!/usr/bin/env bash
# Downloads MySQL and MariaDB releases other than the system's MariaDB 10.11 from
# Debian's archive and unpacks them into a git-ignored folder, without installing
# anything into the system (that would replace the 10.11 the test suite uses).
#
# Usage: ./scripts/fetch-servers.sh [FLAVOUR...]     (default: every flavour below)
#        ./scripts/fetch-servers.sh --list           (the flavours and their state)
# Flavours:
#   mysql-9.7     Debian sid:      mysql-server-core, mysql-client-core
#   mariadb-11.8  Debian trixie:   mariadb-server-core, mariadb-client-core, mariadb-client
#   mariadb-10.5  Debian bullseye: mariadb-server-core-10.5, mariadb-client-core-10.5,
#                                  mariadb-client-10.5, mariadb-server-10.5
#   (mariadb-10.11 is Debian 12's own mariadb-server, installed by scripts/setup.sh.)
# Environment:
#   BINRELAY_SERVERS_DIR  where the releases go (default: .servers/ at the repo root).
#   BINRELAY_DEBIAN_MIRROR  the archive (default: the first deb.debian.org-style URI of
#                         this machine's apt sources, else http://deb.debian.org/debian).
#
# Each release gets DIR/FLAVOUR/ with
#   root/        the packages and their whole library closure, unpacked by dpkg-deb -x;
#   bin/TOOL     a wrapper per executable that runs it through the unpacked dynamic
#                loader with the unpacked libraries (ld-linux-x86-64.so.2 --library-path);
#   base/        a base directory for mariadb-install-db (base/bin, base/sbin are the
#                wrappers, base/share the release's usr/share);
#   version      the server package's version; .complete once all of it is in place.
# Fetching goes through a private apt state (its own sources list, lists, cache and
# an empty dpkg status, so apt resolves every dependency instead of taking the
# system's versions). A release already complete is left alone: running the script
# again costs nothing. About a minute per release.
set -euo pipefail
repo_root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${BINRELAY_SERVERS_DIR:-$repo_root/.servers}"
all_flavours=(mysql-9.7 mariadb-11.8 mariadb-10.5)

suite_of() {
  case "$1" in
    mysql-9.7) echo sid ;;
    mariadb-11.8) echo trixie ;;
    mariadb-10.5) echo bullseye ;;
    *) return 1 ;;
  esac
}
packages_of() {
  case "$1" in
    mysql-9.7) echo mysql-server-core mysql-client-core ;;
    mariadb-11.8) echo mariadb-server-core mariadb-client-core mariadb-client ;;
    # mariadb-server-10.5 for mariadb-binlog (in mariadb-client from 10.6 on).
    mariadb-10.5) echo mariadb-server-core-10.5 mariadb-client-core-10.5 mariadb-client-10.5 mariadb-server-10.5 ;;
  esac
}
# The version the flavour's name promises: a suite that moved on to another
# release must fail here, not run tests against a server the name does not say.
version_prefix_of() {
  case "$1" in
    mysql-9.7) echo 9.7. ;;
    mariadb-11.8) echo 1:11.8. ;;
    mariadb-10.5) echo 1:10.5. ;;
  esac
}

usage() { sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; }

mirror() {
  if [ -n "${BINRELAY_DEBIAN_MIRROR:-}" ]; then echo "$BINRELAY_DEBIAN_MIRROR"; return; fi
  local uri
  uri=$(grep -hE '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources \
          /etc/apt/sources.list.d/*.list 2>/dev/null |
        grep -oE 'https?://[^ ]+/debian/?' | grep -v security | head -n1 || true)
  echo "${uri:-http://deb.debian.org/debian}"
}

list() {
  for f in "${all_flavours[@]}"; do
    if [ -f "$dest/$f/.complete" ]; then
      echo "$f: $(cat "$dest/$f/version") in $dest/$f"
    else
      echo "$f: not fetched ($0 $f)"
    fi
  done
  echo "mariadb-10.11: the system's (/usr/sbin/mariadbd, scripts/setup.sh)"
}

is_elf() { [ -f "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

fetch() {
  local flavour="$1" suite work root apt_dir
  suite=$(suite_of "$flavour") || { echo "fetch-servers: unknown flavour '$flavour'" >&2; usage >&2; exit 2; }
  work="$dest/$flavour"
  if [ -f "$work/.complete" ]; then
    echo "fetch-servers: $flavour $(cat "$work/version") already in $work"
    return
  fi
  echo "fetch-servers: $flavour from Debian $suite"
  rm -rf "$work"
  mkdir -p "$work"
  apt_dir="$dest/.apt/$suite"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  : > "$apt_dir/status"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(mirror) $suite main" \
    > "$apt_dir/sources.list"
  local apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o "Dir::Etc::sourceparts=-"
                  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::State::status=$apt_dir/status"
                  -o "Dir::Cache=$apt_dir/cache" -o "APT::Sandbox::User=root"
                  -o "Debug::NoLocking=1" -o "Acquire::Retries=3")
  apt-get "${apt_opts[@]}" -qq update </dev/null

  local wanted server_pkg version prefix
  read -r -a wanted <<<"$(packages_of "$flavour")"
  server_pkg="${wanted[0]}"
  version=$(apt-cache "${apt_opts[@]}" show "$server_pkg" | sed -n 's/^Version: //p' | head -n1)
  prefix=$(version_prefix_of "$flavour")
  if [[ "$version" != "$prefix"* ]]; then
    echo "fetch-servers: Debian $suite's $server_pkg is '$version', not $flavour; set" \
         "BINRELAY_DEBIAN_MIRROR to an archive snapshot that still has it" >&2
    exit 1
  fi

  # The packages and their run-time library closure. Only shared-library
  # packages (and zlib1g) are taken from the closure: the rest (perl, debconf,
  # mysql-common's /etc files) is not needed to run the binaries from a folder.
  local closure=() p
  while read -r p; do
    case "$p" in
      "<"*) ;;                                # virtual package
      libperl*|*-perl) ;;
      lib*|zlib1g) closure+=("$p") ;;
    esac
  done < <(apt-cache "${apt_opts[@]}" depends --recurse --no-recommends --no-suggests \
             --no-conflicts --no-breaks --no-replaces --no-enhances "${wanted[@]}" |
           grep -v '^ ' | sed 's/:any$//' | sort -u)
  mkdir -p "$work/debs"
  (cd "$work/debs" && apt-get "${apt_opts[@]}" -qq download "${wanted[@]}" "${closure[@]}" </dev/null)
  root="$work/root"
  mkdir -p "$root"
  for deb in "$work/debs"/*.deb; do dpkg-deb -x "$deb" "$root"; done
  rm -rf "$work/debs"

  # The loader: bullseye ships it in lib/, trixie and sid in usr/lib (merged /usr).
  # Symlinks inside the packages are absolute (/lib/...), so take the real file.
  local loader=""
  for cand in "$root"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 \
              "$root"/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$root"/lib/x86_64-linux-gnu/ld-2.*.so; do
    if [ -f "$cand" ] && [ ! -L "$cand" ]; then loader="$cand"; break; fi
    if [ -L "$cand" ]; then
      local target; target=$(readlink "$cand")
      case "$target" in /*) target="$root$target" ;; *) target="$(dirname "$cand")/$target" ;; esac
      if [ -f "$target" ]; then loader="$target"; break; fi
    fi
  done
  [ -n "$loader" ] || { echo "fetch-servers: no dynamic loader in $root (libc6 missing?)" >&2; exit 1; }
  local libpath="$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu"

  mkdir -p "$work/bin" "$work/base"
  local exe name unresolved=""
  for exe in "$root"/usr/bin/* "$root"/usr/sbin/*; do
    is_elf "$exe" || continue
    name=$(basename "$exe")
    # Paths relative to the wrapper, so the folder can be moved as a whole.
    cat >"$work/bin/$name" <<EOF
#!/bin/sh
# $flavour's $name, run with its own libraries (scripts/fetch-servers.sh).
here=\$(dirname -- "\$(dirname -- "\$(readlink -f -- "\$0")")")
root="\$here/root"
MARIADB_PLUGIN_DIR="\${MARIADB_PLUGIN_DIR:-\$root/usr/lib/x86_64-linux-gnu/libmariadb3/plugin}"
export MARIADB_PLUGIN_DIR
exec "\$root/${loader#"$root/"}" --library-path "\$root/usr/lib/x86_64-linux-gnu:\$root/lib/x86_64-linux-gnu" "\$root/${exe#"$root/"}" "\$@"
EOF
    chmod +x "$work/bin/$name"
    if "$loader" --library-path "$libpath" --list "$exe" 2>&1 | grep -q 'not found'; then
      unresolved+=" $name"
    fi
  done
  if [ -n "$unresolved" ]; then
    echo "fetch-servers: $flavour: libraries not found for:$unresolved" >&2
    for name in $unresolved; do
      "$loader" --library-path "$libpath" --list "$root/usr/bin/$name" "$root/usr/sbin/$name" 2>/dev/null |
        grep 'not found' >&2 || true
    done
    exit 1
  fi
  # Shell-script tools (mariadb-install-db) run as they are; they find the
  # wrappers through base/.
  for exe in "$root"/usr/bin/* "$root"/usr/sbin/*; do
    [ -f "$exe" ] && ! is_elf "$exe" && [ ! -e "$work/bin/$(basename "$exe")" ] &&
      ln -s "../root/${exe#"$root/"}" "$work/bin/$(basename "$exe")"
  done
  ln -sfn ../bin "$work/base/bin"
  ln -sfn ../bin "$work/base/sbin"
  ln -sfn ../root/usr/share "$work/base/share"
  # Smoke test: the server starts far enough to print its version.
  local server=mysqld
  [ -x "$work/bin/mariadbd" ] && server=mariadbd
  "$work/bin/$server" --version >/dev/null
  echo "$version" >"$work/version"
  touch "$work/.complete"
  echo "fetch-servers: $flavour $version ready in $work ($(du -sh "$work" | cut -f1))"
}

flavours=()
while (($#)); do
  case "$1" in
    --list) list; exit 0 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "fetch-servers: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *) flavours+=("$1"); shift ;;
  esac
done
((${#flavours[@]})) || flavours=("${all_flavours[@]}")
for command in apt-get apt-cache dpkg-deb; do
  command -v "$command" >/dev/null || { echo "fetch-servers: needs $command (Debian)" >&2; exit 2; }
done
mkdir -p "$dest"
for f in "${flavours[@]}"; do fetch "$f"; done
