# SPDX-License-Identifier: MIT
# replace_check.sh -- the checker of `transact good|bad` (tests/c/transact.c)
# and tests/go/replace.go under crashtest: data is absent before the first
# "committed K" in $CRASHTEST_OUTPUT, then "record 1" .. "record k", "end k",
# whole, with k >= K; besides data and data.tmp, only old (of DIR) is there.
# A shell, not Python: a state costs a checker's start, and Python's is ten
# times a shell's.
k=$(sed -n 's/^committed //p' "$CRASHTEST_OUTPUT" | tail -n 1)
for f in * .[!.]*; do
	case $f in
	data | data.tmp | old | '*' | '.[!.]*') ;;
	*) echo "unexpected name $f"; exit 1 ;;
	esac
done
if ! [ -e data ]; then
	[ -z "$k" ] || { echo "committed $k, and data is missing"; exit 1; }
	exit 0
fi
n=$(sed -n 's/^end \([0-9][0-9]*\)$/\1/p' data)
want=$(i=0; while [ $((i += 1)) -le "${n:-0}" ]; do echo "record $i"; done; echo "end $n")
[ -n "$n" ] && [ "$n" -ge "${k:-0}" ] && [ "$(cat data; echo .)" = "$want
." ] || { echo "committed $k, and data holds:"; cat -v data; exit 1; }
