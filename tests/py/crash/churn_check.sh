# SPDX-License-Identifier: MIT
# churn_check.sh -- each file holds what the last "want" line of churn.py
# named, or what it held before the run ($1: "FILE SHA" lines).
for f in a b; do
	want=$(awk -v f="$f" '$1 == "want" && $2 == f { h = $3 } END { print h }' "$CRASHTEST_OUTPUT")
	[ -n "$want" ] || want=$(awk -v f="$f" '$1 == f { print $2 }' "$1")
	have=$(sha256sum < "$f" | cut -d' ' -f1)
	[ "$have" = "$want" ] || { echo "$f: $have, want $want" >&2; exit 1; }
done
