#!/bin/bash
# cli_docs.sh - what the packages say about a command line, made from the binary's own --help at
# build time so it cannot drift from the code (CLI11 help layout: "Subcommands:", "Options:").
#   cli_docs.sh completion BINARY NAME OUT    bash completion of NAME: subcommands, their options,
#                                             the values of options with choices ({text,json})
#   cli_docs.sh manpage BINARY NAME SECTION SUMMARY OUT.gz
#                                             help2man page with every subcommand's --help
#   cli_docs.sh words BINARY [SUBCOMMAND]     the subcommands and options --help lists, one a line
#                                             (what the completion must offer; its test uses it)
set -euo pipefail

# help_of BINARY NAME [SUBCOMMAND]: --help as the installed NAME prints it (CLI11 puts argv[0] in
# the usage line, so the build path must not leak into the package).
help_of() { (exec -a "$2" "$1" ${3:+"$3"} --help); }

# subcommands_of HELP: the names under "Subcommands:".
subcommands_of() {
  awk '/^Subcommands:/ {in_list = 1; next}
       in_list && /^  [a-z]/ {print $1; next}
       in_list && !/^  / {in_list = 0}' <<<"$1"
}

# options_of HELP: "name takes_value choices" per option name under "Options:", e.g.
# "-o 1 text,json", "--output 1 text,json", "--detail 0 -".
options_of() {
  # Options sit under "Options:" and under CLI11's option groups ("Fleet store (ClickHouse):").
  awk '/^[A-Za-z][^:]*:$/ {in_list = 1; next}
       in_list && /^  -/ {
         line = substr($0, 3)
         names = line; sub(/ .*/, "", names)
         rest = substr(line, length(names) + 1)
         takes = 0; choices = "-"
         # A value type follows the names after one space ("--role TEXT:{host,target}"); a flag is
         # followed by two or more spaces and its description.
         if (rest ~ /^ [^ ]/) {
           takes = 1
           type = substr(rest, 2); sub(/ .*/, "", type)
           if (match(type, /\{[^}]*\}/)) choices = substr(type, RSTART + 1, RLENGTH - 2)
         }
         n = split(names, parts, ",")
         for (i = 1; i <= n; i++) print parts[i], takes, choices
         next
       }
       in_list && !/^  / && !/^$/ {in_list = 0}' <<<"$1"
}

words() {
  local help
  help=$(help_of "$1" "$(basename "$1")" ${2:+"$2"})
  subcommands_of "$help"
  options_of "$help" | cut -d' ' -f1
}

# case_body HELP: the completion's lines for one command level.
case_body() {
  local opts values="" name takes choices
  opts=$(options_of "$1" | cut -d' ' -f1 | tr '\n' ' ')
  printf '      opts="%s"\n' "${opts% }"
  printf '      words="%s"\n' "$(subcommands_of "$1" | tr '\n' ' ' | sed 's/ $//')"
  while read -r name takes choices; do
    [ "$takes" = 1 ] || continue
    if [ "$choices" = - ]; then
      values+="        $name) return ;;\n"  # a file, a number, an address: the shell's default
    else
      values+="        $name) mapfile -t COMPREPLY < <(compgen -W \"${choices//,/ }\" -- \"\$cur\"); return ;;\n"
    fi
  done < <(options_of "$1")
  if [ -n "$values" ]; then
    printf '      case $prev in\n%b      esac\n' "$values"
  fi
}

completion() {
  local bin=$1 name=$2 out=$3 top sub fn
  top=$(help_of "$bin" "$name")
  fn="_${name//-/_}"
  {
    printf '# bash completion for %s, generated from `%s --help` when the package was built.\n' \
      "$name" "$name"
    printf '%s() {\n' "$fn"
    printf '  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n'
    printf '  local sub="" i opts words\n'
    local subs
    subs=$(subcommands_of "$top" | tr '\n' '|' | sed 's/|$//')
    if [ -n "$subs" ]; then
      printf '  for ((i = 1; i < COMP_CWORD; i++)); do\n'
      printf '    case ${COMP_WORDS[i]} in %s) sub=${COMP_WORDS[i]}; break ;; esac\n' "$subs"
      printf '  done\n'
    fi
    printf '  case $sub in\n'
    printf '    "")\n'
    case_body "$top"
    printf '      ;;\n'
    for sub in $(subcommands_of "$top"); do
      printf '    %s)\n' "$sub"
      case_body "$(help_of "$bin" "$name" "$sub")"
      printf '      ;;\n'
    done
    printf '  esac\n'
    printf '  if [[ $cur == -* ]]; then\n'
    printf '    mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")\n'
    printf '  elif [ -n "$words" ]; then\n'
    printf '    mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")\n'
    printf '  fi\n'
    printf '}\n'
    printf 'complete -o default -F %s %s\n' "$fn" "$name"
  } >"$out"
}

# roff_text: help text as literal lines in a man page (no-fill; backslashes and leading dots or
# quotes escaped).
roff_text() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

manpage() {
  local bin=$1 name=$2 section=$3 summary=$4 out=$5 work sub
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  # help2man runs NAME, so NAME must be a program of that name.
  printf '#!/bin/bash\nexec -a %s %q "$@"\n' "$name" "$(realpath "$bin")" >"$work/$name"
  chmod +x "$work/$name"
  {
    local subs
    subs=$(subcommands_of "$(help_of "$bin" "$name")")
    if [ -n "$subs" ]; then
      printf '[COMMANDS]\n'
      for sub in $subs; do
        printf '.SS %s %s\n.nf\n' "$name" "$sub"
        help_of "$bin" "$name" "$sub" | roff_text
        printf '.fi\n'
      done
    fi
    printf '[SEE ALSO]\n'
    printf 'ntprofd(8), ntprofctl(1), ntprof-collector(1); /usr/share/doc/%s\n' "$name"
  } >"$work/include"
  help2man --no-info --no-discard-stderr --section="$section" --name="$summary" \
    --include="$work/include" --output="$work/$name.$section" "$work/$name"
  gzip -9n -c "$work/$name.$section" >"$out"
}

mode=${1:-}
shift || true
case $mode in
  completion) completion "$@" ;;
  manpage) manpage "$@" ;;
  words) words "$@" ;;
  *) echo "usage: cli_docs.sh completion|manpage|words ..." >&2; exit 2 ;;
esac
