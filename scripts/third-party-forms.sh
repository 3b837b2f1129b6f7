#!/usr/bin/env bash
# scripts/third-party-forms.sh DEST
#
# Pages nobody on this project wrote, for the forms agent's tests
# (crates/ferry-forms/tests/it/third_party.rs): demo and example pages that ship inside the
# npm packages of form and validation libraries and design systems. Downloads the exact
# versions below with `npm pack`, checks each tarball's sha256, unpacks each into
# DEST/<dir>/, copies in the few files a demo expects but its package lacks, rewrites remote
# <script>/<link> URLs to local copies (or to empty data: URLs for icons, fonts, ads and code
# highlighting), and writes wrapper pages in DEST/_pages/ around design-system fragments that
# ship without a page (the fragment unchanged, with its package's own CSS and JS).
#
# Nothing of it is committed: some of these packages are not under an open licence
# (formvalidation, bootstrapvalidator), so they are fetched where the tests run.
# Needs: npm (registry access), node, python3, sha256sum. scripts/test.sh runs it.
set -euo pipefail
DEST=${1:?usage: scripts/third-party-forms.sh DEST}
mkdir -p "$DEST/_tgz"
DEST=$(cd "$DEST" && pwd)

# spec  dir-under-DEST  sha256-of-tarball
PKGS=(
  "jquery-validation@1.13.1   jquery-validation   082531ecf38d9701d3ba7d6cc9bd35f714af0898c73016d240c8ec62578e23a8"
  "jquery-validation@1.14.0   _jquery-validation-1.14.0 53a6e2e408b8b98ba745d543f99b8c8c7edcd0f9c1b16207be0fbe92a707c71d"
  "jquery-ui@1.13.3           jquery-ui           8323e5d570f94a3441e300741d1b55c6fcd83cf4cf9194f05cb41e5fe6923c2d"
  "parsleyjs@2.6.0            parsleyjs           c26b7e1bf9a046277a82b15061e2e267c420ea44d6663c0f3fc68edb4ffb896f"
  "formvalidation@0.6.2-dev   formvalidation      7a74255998f31839514d7abfe24e94ac30c1558a213fdf1760361e9b48884473"
  "bootstrapvalidator@0.5.4   bootstrapvalidator  6d681392f9c8c40c4da6333af7615173bd1f5c5c624863dff2d255edaebf754f"
  "foundation-sites@6.9.0     foundation-sites    947855ed0db6ee70ea7904d428a599fb1b010d9a2fbb8a981cc5bf762f53aad5"
  "jquery@3.7.1               jquery              68a9f787516da47c680e09c187bcbac4536b6f85d90eb882844e12919e583f53"
  "what-input@5.2.12          what-input          276a8d6bfd733a6b9c36adf410196289ad1deca81f29a94a7e71fa82474669b3"
  "spectre.css@0.5.9          spectre.css         285c3bc709a1c30a83c8276f0f87b838e3089ec41c78621e496b638146eeeb03"
  "jquery-mobile@1.4.1        jquery-mobile       bbd66a81ecad8a992c7790165941dcd5a315140b8fa2d8e223914e0a6c9a50b4"
  "govuk-frontend@6.6.0       govuk-frontend      52c4eb554e54d8a6e4ba801e9da5ec3a5b930fd2f117a39677f0b6296e954751"
  "nhsuk-frontend@10.6.1      nhsuk-frontend      1af037bcb75237c4208809d3ac9a06522ccf61b2268221268ead3985bceb060b"
  "@uswds/uswds@3.14.0        uswds               da91c65e6fc736fa397f0daf6ca2c2c95711506d85c7ad2537a4570725401e1c"
  # widget libraries: each one's own demo page (the newest release whose package ships one)
  "flatpickr@2.0.8            flatpickr           47ae41e4216a39beba3629cf8dcf8cdec55936b7bc406a7c20a2257e0d803a00"
  "jquery-ui@1.12.1           jquery-ui-1.12.1    68bdea86fde869ce496adc09c49b225b39607b2122ba668cd9cc43d74783507d"
  "react-datepicker@0.20.0    react-datepicker    9cc24db8b96ef3c8ff7162eaac99ea1905a802b31c444b274161cb789486227d"
  "select2@4.0.0              select2             23b46bf8f8dbf29c746e43406cf7a8278743a0bfed400a8fc8cee3b8e547d005"
  "choices.js@4.1.0           choices.js          8c8fdb45c1f26c85fc8a8d77779e8c12d884f3e6d6e26513a93156843fc4f8a8"
  "react-select@1.0.0-rc.10   react-select        f05006f65794e5b7bb6f3d43838db102226374718bea4fe48a4b51c542394c76"
  "dropzone@4.3.0             dropzone            84194d08d557b53b4c6b52c1ae2b5df988190f3f0cf84f2e29de5ee547b8af55"
  "jquery-autotab@1.9.2       jquery-autotab      901547ab63a9ccc30f59850dc8cef52590c4110af539d9449baafb00b4c75467"
  "bootstrap-pincode-input@3.0.1 bootstrap-pincode-input 2a39ceaf9541fcb3eeee5d7a11f093f2575bcaae6118f3449aee34bd964124ac"
)

for line in "${PKGS[@]}"; do
  read -r spec dir sum <<<"$line"
  tgz=$(cd "$DEST/_tgz" && npm pack "$spec" --silent 2>/dev/null | tail -1)
  if [ "$sum" != "-" ]; then
    echo "$sum  $DEST/_tgz/$tgz" | sha256sum -c --quiet - || { echo "checksum mismatch: $spec" >&2; exit 1; }
  fi
  rm -rf "${DEST:?}/$dir"; mkdir -p "$DEST/$dir"
  tar xzf "$DEST/_tgz/$tgz" -C "$DEST/$dir" --strip-components=1
  echo "unpacked $spec -> $dir"
done

# jquery-validation 1.13.1 ships demo/ but no dist/: use the 1.14.0 build
# (the next release; same $.validator API the demos call).
mkdir -p "$DEST/jquery-validation/dist"
cp "$DEST/_jquery-validation-1.14.0/dist/jquery.validate.js" \
   "$DEST/_jquery-validation-1.14.0/dist/additional-methods.js" "$DEST/jquery-validation/dist/"

# select2 4.0.0 ships its documentation as Jekyll sources: render examples.html the way
# Jekyll does (the layout around the page, its includes inlined); dist/ sits beside docs/.
python3 - "$DEST/select2/docs" <<'PY'
import re, sys, os
D = sys.argv[1]
page = open(os.path.join(D, 'examples.html'), encoding='utf-8').read()
front, body = re.match(r'---\n(.*?)\n---\n(.*)', page, re.S).groups()
title = re.search(r'^title:\s*(.*)$', front, re.M).group(1)
layout = open(os.path.join(D, '_layouts/default.html'), encoding='utf-8').read()
include = lambda m: open(os.path.join(D, '_includes', m.group(1)), encoding='utf-8').read()
out = re.sub(r'{%\s*include\s+(\S+)\s*%}', include, layout)
out = out.replace('{{ content }}', body).replace('{{ page.title }}', title)
out = re.sub(r'(src|href)="dist/', r'\1="../dist/', out)
open(os.path.join(D, 'examples.rendered.html'), 'w', encoding='utf-8').write(out)
print('rendered select2/docs/examples.rendered.html')
PY

# Rewrite remote URLs in the pages we use.
python3 - "$DEST" <<'PY'
import os, re, sys
D = sys.argv[1]
# remote URL (regex) -> local file relative to DEST
MAP = [
    (r'(https?:)?//code\.jquery\.com/ui/1\.10\.4/jquery-ui\.min\.js', 'jquery-ui/dist/jquery-ui.min.js'),
    (r'(https?:)?//code\.jquery\.com/ui/1\.10\.4/themes/smoothness/jquery-ui\.min\.css',
     'jquery-ui/dist/themes/smoothness/jquery-ui.min.css'),
    (r'http://code\.jquery\.com/jquery-1\.11\.1\.min\.js', 'jquery-ui-1.12.1/external/jquery-1.11.1/jquery.js'),
    (r'https://code\.jquery\.com/jquery-3\.4\.1\.slim\.min\.js', 'jquery/dist/jquery.slim.min.js'),
]
# local-but-missing paths (page -> {attr value -> local file relative to DEST})
LOCAL = {
    'foundation-sites/customizer/index.html': {
        'css/foundation.css': 'foundation-sites/dist/css/foundation.css',
        'js/vendor/jquery.js': 'jquery/dist/jquery.js',
        'js/vendor/what-input.js': 'what-input/dist/what-input.js',
        'js/vendor/foundation.js': 'foundation-sites/dist/js/foundation.js',
        'css/app.css': None, 'js/app.js': None,   # project stubs of the zip download: empty
    },
}
# broken relative paths under a folder: used only when the referenced file is absent
FALLBACK = {
    'jquery-mobile/dist/demos/': {'js/jquery.js': 'jquery-mobile/dist/demos/js/jquery.js'},
}
EMPTY = {'script': 'data:text/javascript,', 'link': 'data:text/css,'}
DIRS = ['jquery-validation/demo', 'parsleyjs/doc', 'formvalidation/demo', 'bootstrapvalidator/demo',
        'foundation-sites/customizer', 'spectre.css/docs', 'jquery-mobile/dist/demos',
        'select2/docs', 'choices.js/public', 'react-select/.publish', 'react-datepicker/docs',
        'jquery-autotab', 'bootstrap-pincode-input']
tag_re = re.compile(r'<(script|link)\b[^>]*?\b(src|href)\s*=\s*(["\'])(.*?)\3[^>]*>', re.I | re.S)

def fix(path):
    rel = os.path.relpath(path, D)
    here = os.path.dirname(path)
    src = open(path, encoding='utf-8', errors='surrogateescape').read()
    def sub(m):
        tag, url = m.group(1).lower(), m.group(4)
        if tag == 'link' and not re.search(r'rel\s*=\s*["\']?stylesheet', m.group(0), re.I):
            return m.group(0)
        new = None
        if rel in LOCAL and url in LOCAL[rel]:
            tgt = LOCAL[rel][url]
            new = EMPTY[tag] if tgt is None else os.path.relpath(os.path.join(D, tgt), here)
        elif any(rel.startswith(k) and url in v for k, v in FALLBACK.items()) \
                and not os.path.exists(os.path.join(here, url)):
            tgt = next(v[url] for k, v in FALLBACK.items() if rel.startswith(k) and url in v)
            new = os.path.relpath(os.path.join(D, tgt), here)
        elif re.match(r'(https?:)?//', url):
            for pat, tgt in MAP:
                if re.fullmatch(pat, url):
                    new = os.path.relpath(os.path.join(D, tgt), here)
                    break
            else:
                new = EMPTY[tag]   # icons, ads, fonts, code highlighting, IE shims
        if new is None:
            return m.group(0)
        s, e = m.span(4)
        tag_text = m.group(0)[:s - m.start()] + new + m.group(0)[e - m.start():]
        # a local copy is not the file a Subresource Integrity hash names
        return re.sub(r'\s+integrity\s*=\s*(["\']).*?\1', '', tag_text, flags=re.S)
    out = tag_re.sub(sub, src)
    if out != src:
        open(path, 'w', encoding='utf-8', errors='surrogateescape').write(out)
        print('rewrote', rel)

for d in DIRS:
    for dp, dn, fn in os.walk(os.path.join(D, d)):
        for f in fn:
            if f.endswith(('.html', '.htm')):
                fix(os.path.join(dp, f))
PY

# govuk-frontend's CSS loads fonts from /assets/ (site root)
ln -sfn govuk-frontend/dist/govuk/assets "$DEST/assets"

# Wrapper pages for design-system fragments (third-party markup verbatim
# inside a minimal page that loads the package's own CSS and JS).
node - "$DEST" <<'JS'
const fs = require('fs'), path = require('path');
const D = process.argv[2], P = path.join(D, '_pages');
fs.mkdirSync(P, { recursive: true });
const nhsFix = (comp, name) => JSON.parse(fs.readFileSync(
  path.join(D, 'nhsuk-frontend/dist/nhsuk/components', comp, 'fixtures.json'))).fixtures.find(f => f.name === name).html;
const govTpl = (comp, ex) => fs.readFileSync(path.join(D, 'govuk-frontend/dist/govuk/components', comp, `template-${ex}.html`), 'utf8');
const KITS = {
  nhs: { css: '../nhsuk-frontend/dist/nhsuk/nhsuk-frontend.min.css', js: '../nhsuk-frontend/dist/nhsuk/nhsuk-frontend.min.js',
         supported: 'nhsuk-frontend-supported', wrap: ['<main class="nhsuk-main-wrapper"><div class="nhsuk-width-container">', '</div></main>'] },
  gov: { css: '../govuk-frontend/dist/govuk/govuk-frontend.min.css', js: '../govuk-frontend/dist/govuk/govuk-frontend.min.js',
         supported: 'govuk-frontend-supported', wrap: ['<main class="govuk-main-wrapper"><div class="govuk-width-container">', '</div></main>'] },
  usa: { css: '../uswds/dist/css/uswds.min.css', js: null, supported: '', wrap: ['<main class="usa-section"><div class="grid-container">', '</div></main>'] },
};
const page = (file, title, kit, fragment) => {
  const k = KITS[kit];
  fs.writeFileSync(path.join(P, file), `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>${title}</title><link rel="stylesheet" href="${k.css}"></head>
<body>
<script>document.body.className += ' js-enabled ${k.supported}';</script>
${k.wrap[0]}
<form action="#" method="post" novalidate>
${fragment}
</form>
${k.wrap[1]}
${k.js ? `<script type="module">import { initAll } from '${k.js}'; initAll();</script>` : ''}
</body>
</html>
`);
  console.log('wrote _pages/' + file);
};
page('nhsuk-checkboxes-conditional.html', 'NHS checkboxes with conditional content', 'nhs', nhsFix('checkboxes', 'with conditional content'));
page('nhsuk-checkboxes-none-conditional.html', 'NHS checkboxes, none option, conditional content', 'nhs', nhsFix('checkboxes', 'with "none" option, conditional content'));
page('nhsuk-date-input.html', 'NHS date input', 'nhs', nhsFix('date-input', 'default'));
page('govuk-date-input.html', 'GOV.UK date input', 'gov', govTpl('date-input', 'default'));
page('govuk-checkboxes-conditional.html', 'GOV.UK checkboxes with conditional items', 'gov', govTpl('checkboxes', 'with-conditional-items'));
page('govuk-checkboxes-legend-heading.html', 'GOV.UK checkboxes with legend as page heading', 'gov', govTpl('checkboxes', 'with-legend-as-a-page-heading'));
page('govuk-radios-legend-heading.html', 'GOV.UK radios with legend as page heading', 'gov', govTpl('radios', 'with-legend-as-page-heading'));
page('uswds-memorable-date.html', 'USWDS memorable date', 'usa',
     fs.readFileSync(path.join(D, 'uswds/packages/usa-memorable-date/src/test/template.html'), 'utf8'));
JS
echo "done: $DEST"
