#!/usr/bin/env bash
# Every tracked C++ source and header as .clang-format has it (STYLE.md habit 9): lists the
# files clang-format would change and fails if there is one. Fix with
#   git ls-files '*.cpp' '*.h' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
command -v "$CLANG_FORMAT" >/dev/null || { echo "check_format: $CLANG_FORMAT not found" >&2; exit 1; }
bad=()
while IFS= read -r -d '' file; do
  "$CLANG_FORMAT" --dry-run --Werror "$file" >/dev/null 2>&1 || bad+=("$file")
done < <(git ls-files -z '*.cpp' '*.h')
if ((${#bad[@]})); then
  echo "check_format: not as .clang-format has it (clang-format -i to fix):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check_format: $(git ls-files '*.cpp' '*.h' | wc -l) files clean"
