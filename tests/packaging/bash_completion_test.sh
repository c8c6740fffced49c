#!/bin/bash
# The bash completion the packages install offers exactly what the binaries' --help lists: for
# each binary and each of its subcommands, completing "-" gives every option and completing a
# word gives every subcommand. Runs the generated completion function as bash would (COMP_WORDS,
# COMP_CWORD) and reads --help here with its own simple parse, so a generator that drops or
# invents a word fails.
#   bash_completion_test.sh COMPLETION_DIR BINARY...
set -uo pipefail
dir=$1; shift
failures=0

help_options() { "$@" --help | grep -E '^  -' | sed -E 's/^  //; s/ .*//' | tr ',' '\n' | sort; }
help_subcommands() { "$@" --help | sed -n '/^Subcommands:/,/^$/p' | awk 'NR > 1 && NF {print $1}' | sort; }

# complete NAME WORD...: what the completion offers for the command line "NAME WORD...".
complete_words() {
  local name=$1; shift
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); "_${1//-/_}"
           printf "%s\n" "${COMPREPLY[@]}"' _ "$dir/$name.bash" "$name" "$@" | sed '/^$/d' | sort
}

expect() {
  local what=$1 want=$2 got=$3
  if [ "$want" = "$got" ]; then
    echo "ok:   $what ($(wc -w <<<"$want") words)"
  else
    echo "FAIL: $what"; diff <(echo "$want") <(echo "$got") | sed 's/^/      /'
    failures=$((failures + 1))
  fi
}

for bin in "$@"; do
  name=$(basename "$bin")
  [ -f "$dir/$name.bash" ] || { echo "FAIL: no $dir/$name.bash"; failures=$((failures + 1)); continue; }
  expect "$name -<TAB>" "$(help_options "$bin")" "$(complete_words "$name" -)"
  expect "$name <TAB>" "$(help_subcommands "$bin")" "$(complete_words "$name" "")"
  for sub in $(help_subcommands "$bin"); do
    expect "$name $sub -<TAB>" "$(help_options "$bin" "$sub")" "$(complete_words "$name" "$sub" -)"
  done
done
exit "$failures"
