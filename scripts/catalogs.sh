#!/usr/bin/env bash
# The gettext catalogs (docs/languages.md): `scripts/catalogs.sh extract` rewrites
# app/locale/messages.pot from the sources (babel.cfg says where; app/locale/keywords.txt which
# calls hold messages besides gettext's own: the markers N_/Nn_, say/say_n, and the services'
# refusals, whose first argument is their message); `scripts/catalogs.sh update` also merges it
# into each language's .po (new messages come in untranslated, changed ones fuzzy: translate
# them; tests/test_catalogs.py fails until every one is). Nothing compiled is kept: the app
# compiles the .po files in memory when it starts (app/web/i18n.py).
# `update` keeps each catalog's header (its Language and Plural-Forms) and leaves its
# POT-Creation-Date alone: messages.pot has no header, so its date is only the time of the run.
# CATALOGS_DIR (app/locale unless set) lets tests/test_catalogs.py run it on a copy.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${CATALOGS_DIR:-app/locale}"
keywords=()
while read -r keyword; do keywords+=(-k "$keyword"); done < app/locale/keywords.txt
extract() {
  .venv/bin/pybabel extract -F babel.cfg "${keywords[@]}" --no-location --sort-output \
    --omit-header --no-wrap -o "$dir/messages.pot" . >/dev/null 2>&1
}
case "${1:-extract}" in
  extract) extract ;;
  update)
    extract
    for lang in de fr es; do
      .venv/bin/pybabel update -i "$dir/messages.pot" -d "$dir" -l "$lang" \
        --no-wrap --ignore-obsolete --ignore-pot-creation-date >/dev/null 2>&1
    done ;;
  *) echo "usage: $0 [extract|update]" >&2; exit 2 ;;
esac
