# SPDX-License-Identifier: MIT
# etcd_check.sh -- crashtest's checker of etcd_first_start.sh: etcd starts
# on the state (on the same fixed ports in every state: with -j, each
# checker has a loopback of its own) and every key the first start printed
# is there, read through etcd's HTTP gateway (curl starts in a millisecond,
# etcdctl in tens).  3: etcd was not healthy within 3 s (it elects itself
# in 0.1 s here); 4: a key is missing.
A=http://127.0.0.1:23790
test -d e || exit 0 # no data directory yet: etcd starts afresh
etcd --name m --data-dir e --listen-client-urls $A --advertise-client-urls $A \
	--listen-peer-urls http://127.0.0.1:23800 --heartbeat-interval=10 --election-timeout=100 \
	> check.log 2>&1 &
p=$!
ok=
end=$(($(date +%s%N) + 3000000000))
while [ "$(date +%s%N)" -lt $end ]; do
	case $(curl -s -m 0.2 $A/health) in *'"health":"true"'*) ok=1 && break ;; esac
	kill -0 $p 2> /dev/null || break
	sleep 0.05
done
if [ -z "$ok" ]; then
	echo "etcd was not healthy:"
	tail -n 3 check.log
	kill -9 $p
	exit 3
fi
for k in $(cat "$CRASHTEST_OUTPUT"); do
	if ! curl -s -X POST -d "{\"key\": \"$(printf %s "$k" | base64)\"}" $A/v3/kv/range |
		grep -q "\"value\":\"$(printf v%s "$k" | base64)\""; then
		echo "$k is missing"
		kill -9 $p
		exit 4
	fi
done
kill -9 $p
exit 0
