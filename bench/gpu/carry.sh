#!/usr/bin/env bash
# bench/gpu/carry.sh — puts what a device call needs beside the working tree
# (DESIGN.md: Benchmarks; README: CUDA). The device machine has the runtime
# libraries ksearch links but hiredis, and no -dev headers, so the build is
# made here: .devcarry/ holds build/ksearch, build/ksearch-runner,
# libhiredis, the commit measured (plus "+dirty" when the tree has edits)
# and go.sh, which puts them in place there and runs a command:
#   bash bench/gpu/carry.sh                 # here; .devcarry/ is ignored
#   device call: command ".devcarry/go.sh bash bench/gpu/session.sh $OUT/s"
#                carry [".devcarry"]
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
make -j2 >/dev/null
grep -qxF '/.devcarry/' .git/info/exclude 2>/dev/null || echo '/.devcarry/' >>.git/info/exclude
rm -rf .devcarry
mkdir -p .devcarry/lib
cp build/ksearch build/ksearch-runner .devcarry/
lib=$(ldd build/ksearch | awk '/libhiredis/ {print $3; exit}')
[[ -n $lib ]] && cp -L "$lib" .devcarry/lib/
{
  git rev-parse HEAD
  [[ -z $(git status --porcelain --untracked-files=no) ]] || echo "+dirty"
} | paste -sd '' >.devcarry/commit
cat >.devcarry/go.sh <<'GO'
#!/usr/bin/env bash
# device side: the carried build in build/, its libraries found, then "$@"
cd "$(dirname "$0")/.."
mkdir -p build
cp .devcarry/ksearch .devcarry/ksearch-runner build/
export LD_LIBRARY_PATH=$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
KS_COMMIT=$(cat .devcarry/commit)
export KS_COMMIT
exec "$@"
GO
chmod +x .devcarry/go.sh
echo "carry .devcarry ($(du -sh .devcarry | cut -f1)) for commit $(cat .devcarry/commit)"
