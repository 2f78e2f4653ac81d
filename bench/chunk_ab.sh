#!/bin/bash
# A/B of the chunk work's CPU per span (bench/chunk_cpu.py): OLD and NEW interpreters
# alternated PAIRS times on each FILE; prints each run and the medians.
# usage: bench/chunk_ab.sh OLD_PYTHON NEW_PYTHON PAIRS FILE...
old=$1 new=$2 pairs=$3; shift 3
here=$(dirname "$0")
for f in "$@"; do
  o=(); n=()
  for i in $(seq "$pairs"); do
    o+=("$($old "$here/chunk_cpu.py" "$f" | cut -d' ' -f1)")
    n+=("$($new "$here/chunk_cpu.py" "$f" | cut -d' ' -f1)")
  done
  echo "$f old: ${o[*]}"
  echo "$f new: ${n[*]}"
  python3 -c "import statistics as s,sys; o=[float(x) for x in sys.argv[1].split()]; n=[float(x) for x in sys.argv[2].split()]; print(f'median old {s.median(o):.3f} new {s.median(n):.3f} us/span ({(1-s.median(n)/s.median(o))*100:+.1f}% less)')" "${o[*]}" "${n[*]}"
done
