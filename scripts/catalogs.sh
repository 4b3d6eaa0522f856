#!/usr/bin/env bash
# The gettext catalogs (docs/languages.md): `scripts/catalogs.sh extract` rewrites
# app/locale/messages.pot from the sources (babel.cfg says where; app/locale/keywords.txt which
# calls hold messages besides gettext's own: the markers N_/Nn_, say/say_n, and the services'
# refusals, whose first argument is their message); `scripts/catalogs.sh update` also merges it
# into each language's .po (new messages come in untranslated, changed ones fuzzy: translate
# them; tests/test_catalogs.py fails until every one is). Nothing compiled is kept: the app
# compiles the .po files in memory when it starts (app/web/i18n.py).
set -euo pipefail
cd "$(dirname "$0")/.."
keywords=()
while read -r keyword; do keywords+=(-k "$keyword"); done < app/locale/keywords.txt
extract() {
  .venv/bin/pybabel extract -F babel.cfg "${keywords[@]}" --no-location --sort-output \
    --omit-header --no-wrap -o app/locale/messages.pot . >/dev/null 2>&1
}
case "${1:-extract}" in
  extract) extract ;;
  update)
    extract
    for lang in de fr es; do
      .venv/bin/pybabel update -i app/locale/messages.pot -d app/locale -l "$lang" \
        --no-wrap --omit-header --ignore-obsolete >/dev/null 2>&1
    done ;;
  *) echo "usage: $0 [extract|update]" >&2; exit 2 ;;
esac
