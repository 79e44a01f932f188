# SPDX-License-Identifier: MIT
# churn_check.sh -- each file holds what one of the last two "want" lines of
# churn.py named (it prints before its fsync: a crash point comes between),
# or what it held before the run ($1: "FILE SHA" lines).
for f in a b; do
	wants=$(awk -v f="$f" '$1 == f { print $2 } $1 == "want" && $2 == f { print $3 }' \
		"$1" "$CRASHTEST_OUTPUT" | tail -n 2)
	have=$(sha256sum < "$f" | cut -d' ' -f1)
	echo "$wants" | grep -qx "$have" || { echo "$f: $have, want $wants" >&2; exit 1; }
done
