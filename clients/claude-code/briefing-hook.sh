#!/bin/sh
# Wikantik briefing hook for Claude Code (`UserPromptSubmit`).
#
# On the first prompt of a session, fetch the wiki context briefing
#   GET $WIKANTIK_BASE_URL/api/briefing?pins=…&clusters=…&prompt=…&budget=…&format=md
# and print it on stdout, which Claude Code adds to the model's context. Every later prompt of
# the same session is left alone. It never fails the model call: on any problem it prints
# nothing and exits 0.
#
# Needs only a POSIX shell, awk and curl (no jq). See README.md next to this file.
#
# Environment:
#   WIKANTIK_BASE_URL          required; unset or empty → silent no-op
#   WIKANTIK_BRIEFING_PINS     page slugs or canonical ids, comma-separated
#   WIKANTIK_BRIEFING_CLUSTERS cluster paths, comma-separated
#   WIKANTIK_BRIEFING_BUDGET   token budget (the server clamps it to 200..24000)
#   WIKANTIK_API_KEY           API key sent as `Authorization: Bearer` (wins over basic auth)
#   WIKANTIK_BASIC_AUTH        `user:password` for HTTP basic auth (the password may be a key)
#   WIKANTIK_BRIEFING_TIMEOUT  whole-request timeout in seconds, 1..10 (default 10)

# ---- shared part (generated from clients/lib/briefing-hook-core.sh by scripts/gen-hooks.sh: edit it there) ----

# Largest prompt sent, in characters: the briefing only needs the gist of the first request,
# and URLs must stay well under the 16 KiB edge limits.
WIKANTIK_PROMPT_MAX_CHARS=2000

# wk_json_get KEYS SLASH MAX: read one JSON object on stdin and print, in `printf %b` form, the
# value of the first top-level key among KEYS (space-separated) whose value is a non-empty
# string. JSON escapes are decoded (\uXXXX and surrogate pairs to UTF-8); with SLASH=1 every
# `/` becomes `_`; at most MAX characters are kept. Prints nothing for malformed input.
wk_json_get() {
  LC_ALL=C awk -v keys="$1" -v slash="$2" -v max="$3" '
    function ws() { while (i <= n && (c[i] == " " || c[i] == "\t" || c[i] == "\n" || c[i] == "\r")) i++ }
    function oct(b) { return sprintf("\\0%03o", b) }
    function hex4(p,   k, v, d) {
      v = 0
      for (k = 0; k < 4; k++) {
        d = index("0123456789abcdef", tolower(c[p + k]))
        if (d == 0 || length(c[p + k]) != 1) return -1
        v = v * 16 + d - 1
      }
      return v
    }
    function ascii(cp, s) {
      if (cp == 0) return ""
      if (cp == 92) return "\\\\"
      if (cp == 47 && s) return "_"
      if (cp < 32 || cp == 127) return oct(cp)
      return sprintf("%c", cp)
    }
    function utf8(cp, s) {
      if (cp < 128) return ascii(cp, s)
      if (cp < 2048) return oct(192 + int(cp / 64)) oct(128 + cp % 64)
      if (cp < 65536) return oct(224 + int(cp / 4096)) oct(128 + int(cp / 64) % 64) oct(128 + cp % 64)
      return oct(240 + int(cp / 262144)) oct(128 + int(cp / 4096) % 64) oct(128 + int(cp / 64) % 64) oct(128 + cp % 64)
    }
    # Parse the string at c[i] (an opening quote); return it in %b form when keep is set.
    function str(keep, s, lim,   out, units, full, ch, e, cp, lo, piece, cont) {
      out = ""; units = 0; full = 0; i++
      while (i <= n) {
        ch = c[i]; cont = 0
        if (ch == "\"") { i++; return out }
        if (ch == "\\") {
          e = c[i + 1]
          if (e == "u") {
            cp = hex4(i + 2)
            if (cp < 0) { bad = 1; return "" }
            i += 6
            if (cp >= 55296 && cp < 56320) {
              lo = (c[i] == "\\" && c[i + 1] == "u") ? hex4(i + 2) : -1
              if (lo >= 56320 && lo < 57344) { cp = 65536 + (cp - 55296) * 1024 + (lo - 56320); i += 6 }
              else cp = 65533
            } else if (cp >= 56320 && cp < 57344) cp = 65533
            piece = utf8(cp, s)
          } else {
            if (e == "\"") piece = "\""
            else if (e == "\\") piece = "\\\\"
            else if (e == "/") piece = s ? "_" : "/"
            else if (e == "b") piece = "\\b"
            else if (e == "f") piece = "\\f"
            else if (e == "n") piece = "\\n"
            else if (e == "r") piece = "\\r"
            else if (e == "t") piece = "\\t"
            else { bad = 1; return "" }
            i += 2
          }
        } else {
          if (ch == "\n") piece = "\\n"
          else if (ch == "\r") piece = "\\r"
          else if (ch == "\t") piece = "\\t"
          else if (ch == "/" && s) piece = "_"
          else { piece = ch; cont = (length(ch) == 1 && ch >= "\200" && ch < "\300") }
          i++
        }
        if (keep && !full) {
          if (!cont) { if (units >= lim) { full = 1; continue }; units++ }
          out = out piece
        }
      }
      bad = 1
      return ""
    }
    function skipval(   d, ch) {
      ch = c[i]
      if (ch == "\"") { str(0, 0, 0); return }
      if (ch == "{" || ch == "[") {
        d = 0
        while (i <= n && !bad) {
          ch = c[i]
          if (ch == "\"") { str(0, 0, 0); continue }
          if (ch == "{" || ch == "[") d++
          else if (ch == "}" || ch == "]") { d--; if (d == 0) { i++; return } }
          i++
        }
        bad = 1
        return
      }
      while (i <= n && c[i] != "," && c[i] != "}" && c[i] != "]" && c[i] != " " && c[i] != "\n" && c[i] != "\t" && c[i] != "\r") i++
    }
    BEGIN { nk = split(keys, order, " "); for (j = 1; j <= nk; j++) want[order[j]] = 1 }
    { buf = buf $0 "\n" }
    END {
      n = split(buf, c, ""); i = 1; bad = 0
      ws(); if (c[i] != "{") exit 1
      i++
      while (i <= n) {
        ws(); if (c[i] == "}") break
        if (c[i] != "\"") exit 1
        k = str(1, 0, 1000); if (bad) exit 1
        ws(); if (c[i] != ":") exit 1
        i++; ws()
        if ((k in want) && c[i] == "\"") val[k] = str(1, slash == 1, max)
        else skipval()
        if (bad) exit 1
        ws()
        if (c[i] == ",") { i++; continue }
        if (c[i] == "}") break
        exit 1
      }
      if (c[i] != "}") exit 1
      for (j = 1; j <= nk; j++) if (val[order[j]] != "") { print val[order[j]]; exit 0 }
    }'
}

# wk_decode TEXT: the string a `wk_json_get` result stands for (keeps trailing newlines).
wk_decode() {
  wk_out=$(printf '%bx' "$1") || wk_out=x
  wk_out=${wk_out%x}
}

# wk_curl_config_value TEXT: TEXT quoted for a curl config file; fails on CR/LF.
wk_curl_config_value() {
  case $1 in
    *"$wk_nl"* | *"$wk_cr"*) return 1 ;;
  esac
  wk_out=$(printf '%s' "$1" | sed 's/[\\"]/\\&/g') || return 1
}

# wk_briefing HOOK_JSON SESSION_KEYS: set wk_md to the briefing markdown for the first call of
# a session; return non-zero (and leave wk_md empty) for every later call and on any failure.
wk_briefing() {
  wk_md=
  wk_nl='
'
  wk_cr=$(printf '\r')
  wk_base=${WIKANTIK_BASE_URL:-}
  while :; do
    case $wk_base in */) wk_base=${wk_base%/} ;; *) break ;; esac
  done
  [ -n "$wk_base" ] || return 1
  command -v curl >/dev/null 2>&1 || return 1

  # Session key → state file. The file is created (exclusively) before the fetch, so a
  # session gets at most one attempt even when the wiki is down or two turns race.
  wk_raw=$(printf '%s' "$1" | wk_json_get "$2" 1 1000) || return 1
  [ -n "$wk_raw" ] || return 1
  wk_decode "$wk_raw"
  wk_sid=$wk_out
  [ -n "$wk_sid" ] || return 1
  if [ "${#wk_sid}" -gt 200 ]; then
    wk_sum=$(printf '%s' "$wk_sid" | cksum | awk '{ print $1 "-" $2 }') || return 1
    wk_sid="$(printf '%s' "$wk_sid" | cut -c1-100)-$wk_sum"
  fi
  if [ -n "${XDG_CACHE_HOME:-}" ]; then
    wk_dir=$XDG_CACHE_HOME/wikantik-briefing
  elif [ -n "${HOME:-}" ]; then
    wk_dir=$HOME/.cache/wikantik-briefing
  else
    return 1
  fi
  (umask 077 && mkdir -p "$wk_dir") 2>/dev/null || return 1
  (set -C && umask 077 && : >"$wk_dir/$wk_sid.done") 2>/dev/null || return 1
  # Forget sessions older than 30 days (best effort).
  find "$wk_dir" -type f -name '*.done' -mtime +30 -exec rm -f {} + 2>/dev/null

  # The request. Credentials go through a curl config on stdin, not the command line.
  wk_raw=$(printf '%s' "$1" | wk_json_get prompt 0 "$WIKANTIK_PROMPT_MAX_CHARS") || wk_raw=
  wk_decode "$wk_raw"
  wk_prompt=$wk_out
  wk_timeout=${WIKANTIK_BRIEFING_TIMEOUT:-10}
  case $wk_timeout in
    [1-9] | 10) ;;
    *) wk_timeout=10 ;;
  esac
  wk_config=
  if [ -n "${WIKANTIK_API_KEY:-}" ]; then
    wk_curl_config_value "Authorization: Bearer $WIKANTIK_API_KEY" || return 1
    wk_config="header = \"$wk_out\""
  elif [ -n "${WIKANTIK_BASIC_AUTH:-}" ]; then
    wk_curl_config_value "$WIKANTIK_BASIC_AUTH" || return 1
    wk_config="user = \"$wk_out\""
  fi
  set -- -fsS --proto '=http,https' --max-time "$wk_timeout" -G "$wk_base/api/briefing"
  [ -n "${WIKANTIK_BRIEFING_PINS:-}" ] && set -- "$@" --data-urlencode "pins=$WIKANTIK_BRIEFING_PINS"
  [ -n "${WIKANTIK_BRIEFING_CLUSTERS:-}" ] && set -- "$@" --data-urlencode "clusters=$WIKANTIK_BRIEFING_CLUSTERS"
  [ -n "$wk_prompt" ] && set -- "$@" --data-urlencode "prompt=$wk_prompt"
  [ -n "${WIKANTIK_BRIEFING_BUDGET:-}" ] && set -- "$@" --data-urlencode "budget=$WIKANTIK_BRIEFING_BUDGET"
  set -- "$@" --data-urlencode "format=md"
  wk_body=$(printf '%s\n' "$wk_config" | curl -K - "$@" && printf x) || return 1
  wk_body=${wk_body%x}
  # Only ever inject a briefing (never, say, an HTML login page that answered 200).
  case $wk_body in
    "# Wiki context briefing"*) wk_md=$wk_body ;;
    *) return 1 ;;
  esac
}

# ---- end of the shared part -----------------------------------------------------------------

wk_input=$(cat) || exit 0
if wk_briefing "$wk_input" session_id; then
  printf '%s' "$wk_md"
fi
exit 0
