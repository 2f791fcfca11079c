#!/usr/bin/env bash
# scripts/compare.sh [sqlite|postgres] [ROUNDS]: the shared move-path harness
# (../shared/perf/compare.sh, read its README) against this build.
#
# The harness's setup confirms the players' addresses by opening the links in their mail with GET.
# Here a link's GET only shows the page with the button that confirms (mail scanners follow
# links), so this runs a copy of the harness whose setup presses the button: it POSTs the link's
# token, as the page's form does. Everything else, arguments and environment, is compare.sh's.
set -euo pipefail
shared=$(cd "$(dirname "$0")/../../shared/perf" && pwd)
copy=$(mktemp -d -t kuryr-harness.XXXXXX)
trap 'rm -rf "$copy"' EXIT
cp -a "$shared/." "$copy/"
chmod -R u+w "$copy"
python3 - "$copy/setup_games.py" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
opened = "for link in links: urllib.request.urlopen(link).read()"
pressed = ("for link in links: urllib.request.urlopen("
           "link.split('?', 1)[0], data=link.split('?', 1)[1].encode()).read()")
open(path, "w").write(text.replace(opened, pressed))
PY
# On PostgreSQL a server must be given its signing secret (the harness names none).
export KURYR_JWT_SECRET="${KURYR_JWT_SECRET:-a-secret-for-the-move-path-comparison-only}"
bash "$copy/compare.sh" "$@"
