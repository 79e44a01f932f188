# SPDX-License-Identifier: MIT
# etcd_first_start.sh -- etcd's first start (bench/crashtest_bench.py): a
# new member's data directory made in ./e, a key put and printed once
# etcdctl said it was stored, etcd stopped.  Its log goes nowhere: in the
# directory, each line would be a crash point of --writes.
A=--endpoints=127.0.0.1:23790
etcd --name m --data-dir e --listen-client-urls http://127.0.0.1:23790 \
	--advertise-client-urls http://127.0.0.1:23790 --listen-peer-urls http://127.0.0.1:23800 \
	> /dev/null 2>&1 &
p=$!
for i in $(seq 200); do etcdctl $A put k0 vk0 > /dev/null 2>&1 && break; sleep 0.05; done
echo k0
kill $p
wait $p
exit 0
