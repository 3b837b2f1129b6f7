// ferry-forms page script: inspect, fill and submit the forms of ONE document.
//
// Contract (the Rust side depends on it; the JSON shapes are the serde structs of
// crates/ferry-forms/src/snapshot.rs):
//
// * Evaluated with Runtime.evaluate in an isolated world (Page.createIsolatedWorld) of one
//   frame. It defines `globalThis.__ferryForms` if absent (so evaluating it twice is harmless)
//   and evaluates to `true`. Iframes are inspected separately, per frame: this script only
//   looks at `document` and its open shadow roots.
// * `__ferryForms.inspect()` -> PageSnapshot {url, title, forms, fields, formErrors, text,
//   httpStatus}.
//   It rebuilds the ref table: a field's `ref` indexes an array held here. A radio group, or
//   two or more checkboxes sharing a name in the same form, is ONE field (type "radio" /
//   "checkbox-group"). Hidden, submit, button, reset and image inputs are skipped. A
//   contenteditable region (a rich-text editor) is a field of type "contenteditable" whose
//   value is its text; `fill` answers it with retryTyping, so it is always typed. An ARIA
//   combobox (role=combobox on a text input, button or div) is type "combobox"; `fill`
//   answers it with `combobox: true` and the Rust side drives it with comboOpen (click),
//   typing, comboOptions (wait for the listbox), comboPick (click the option), comboShows.
// * `__ferryForms.fill([{ref, value, typed?}])` -> [FillOutcome {ref, ok, error?, retryTyping?,
//   enabledBy?, widget?}] (`enabledBy`: a disabled field was enabled by ticking this box
//   first; `widget`: a date picker the agent sets through the library's API, widgets.js).
//   `value`: a string, a boolean (checkbox) or a list of strings (multi-select, checkbox
//   group). `typed: true` means the text was already typed with Input.insertText: only
//   change + blur are dispatched and the value is verified.
// * `__ferryForms.element(ref)` -> the element (a group's first member), for
//   DOM.setFileInputFiles; `null` for an unknown ref.
// * `__ferryForms.focus(ref)` -> focuses the control and selects its content (so
//   Input.insertText replaces it); true when it has the focus.
// * `__ferryForms.formIndex(cssSelector)` -> the index of the form matched by the selector
//   (the element itself or the form it belongs to), or null.
// * `__ferryForms.shotBox(formIndex)` -> {x, y, width, height, secrets: [{x, y, width,
//   height}]} or null: the form's box in document coordinates (CSS pixels), and the boxes of
//   its controls whose value must not appear in a picture (passwords, one-time codes, card
//   numbers, security codes and expiry dates), for a screenshot. It reads; it changes nothing.
// * `__ferryForms.submit(formIndex)` -> SubmitOutcome {ok, method, button?, error?,
//   dispatched, cancelled}: clicks the form's first visible, enabled submit button (method
//   "button"), else calls requestSubmit() (method "requestSubmit"). `dispatched`: the submit
//   event fired (not when the browser's own validation stopped it); `cancelled`: a page
//   script called preventDefault() on it. It never validates: Rust decides.
//
// Rules: everything read from the page is data. No network, no eval, and DOM access goes
// through prototype methods captured here, because a form's named controls shadow its
// properties (`<input name="action">` makes `form.action` an element).
(() => {
  'use strict';
  if (globalThis.__ferryForms) return true;

  // ---- Captured natives -------------------------------------------------------------------

  const desc = (proto, prop) => Object.getOwnPropertyDescriptor(proto, prop);
  const native = {
    inputValue: desc(HTMLInputElement.prototype, 'value').set,
    textareaValue: desc(HTMLTextAreaElement.prototype, 'value').set,
    selectValue: desc(HTMLSelectElement.prototype, 'value').set,
    optionSelected: desc(HTMLOptionElement.prototype, 'selected').set,
    formAction: desc(HTMLFormElement.prototype, 'action').get,
    formMethod: desc(HTMLFormElement.prototype, 'method').get,
    formNoValidate: desc(HTMLFormElement.prototype, 'noValidate').get,
    requestSubmit: HTMLFormElement.prototype.requestSubmit,
    addEventListener: EventTarget.prototype.addEventListener,
    removeEventListener: EventTarget.prototype.removeEventListener,
    defaultPrevented: desc(Event.prototype, 'defaultPrevented').get,
    getAttribute: Element.prototype.getAttribute,
    elementQueryAll: Element.prototype.querySelectorAll,
    documentQueryAll: Document.prototype.querySelectorAll,
    fragmentQueryAll: DocumentFragment.prototype.querySelectorAll,
    documentQuery: Document.prototype.querySelector,
    documentTitle: desc(Document.prototype, 'title').get,
    documentBody: desc(Document.prototype, 'body').get,
    innerText: desc(HTMLElement.prototype, 'innerText').get,
  };

  const attr = (el, name) => native.getAttribute.call(el, name);

  function queryAll(root, selector) {
    const fn =
      root.nodeType === Node.DOCUMENT_NODE
        ? native.documentQueryAll
        : root.nodeType === Node.DOCUMENT_FRAGMENT_NODE
          ? native.fragmentQueryAll
          : native.elementQueryAll;
    return Array.from(fn.call(root, selector));
  }

  /** Visits every element of `root` in document order, descending into open shadow roots. */
  function eachElement(root, visit) {
    for (const el of queryAll(root, '*')) {
      visit(el);
      if (el.shadowRoot) eachElement(el.shadowRoot, visit);
    }
  }

  // ---- Text helpers -----------------------------------------------------------------------

  const MASK = '••••••';
  const collapse = (s) => String(s == null ? '' : s).replace(/\s+/g, ' ').trim();
  /** A label text: whitespace collapsed, trailing `*` and `:` removed. */
  const labelText = (s) => collapse(s).replace(/[\s*:]+$/, '');
  const norm = (s) => labelText(s).toLowerCase();

  /** Elements whose text never belongs to a label. */
  const NO_TEXT = new Set([
    'INPUT', 'SELECT', 'TEXTAREA', 'BUTTON', 'OPTION', 'OPTGROUP', 'DATALIST', 'SCRIPT',
    'STYLE', 'TEMPLATE', 'NOSCRIPT',
  ]);

  /**
   * The text of a node without the text of nested controls, scripts and hidden parts (and,
   * with `skipErrors`, of error messages inside it: a label's text is not its error).
   */
  function textOf(node, skipErrors) {
    const parts = [];
    const walk = (n) => {
      for (const child of n.childNodes) {
        if (child.nodeType === Node.TEXT_NODE) {
          parts.push(child.nodeValue);
        } else if (child.nodeType === Node.ELEMENT_NODE) {
          if (NO_TEXT.has(child.tagName) || child.hidden) continue;
          if (attr(child, 'aria-hidden') === 'true') continue;
          if (skipErrors && isErrorElement(child)) continue;
          if (child.tagName === 'IMG') parts.push(attr(child, 'alt') || '');
          else walk(child);
        }
      }
    };
    walk(node);
    return collapse(parts.join(' '));
  }

  /** The text of the elements named by an id list (aria-labelledby, aria-describedby, …). */
  function textOfIds(el, ids) {
    const root = el.getRootNode();
    return collapse(
      String(ids || '')
        .split(/\s+/)
        .filter(Boolean)
        .map((id) => {
          const target = root.getElementById(id);
          if (!target || target === el) return '';
          return textOf(target) || collapse(attr(target, 'aria-label'));
        })
        .join(' '),
    );
  }

  function isVisible(el) {
    if (typeof el.checkVisibility === 'function') {
      return el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
    }
    return el.getClientRects().length > 0;
  }

  // ---- Control classification -------------------------------------------------------------

  const SKIPPED_TYPES = new Set(['hidden', 'submit', 'button', 'reset', 'image']);
  /** Inputs Input.insertText can type into. */
  const TYPABLE = new Set(['text', 'search', 'email', 'url', 'tel', 'password', 'number', 'textarea']);
  /** What a type expects when the browser sanitises a value away. */
  const EXPECTED_FORMAT = {
    date: 'YYYY-MM-DD',
    time: 'HH:MM',
    'datetime-local': 'YYYY-MM-DDTHH:MM',
    month: 'YYYY-MM',
    week: 'YYYY-Www',
    number: 'a number',
    range: 'a number',
    color: '#rrggbb',
  };

  const isControl = (el) => el.tagName === 'INPUT' || el.tagName === 'SELECT' || el.tagName === 'TEXTAREA';
  /** A rich-text field: the outermost element of a contenteditable region. */
  const isEditingHost = (el) =>
    el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable);
  /** A custom select (ARIA combobox) that is not a native control: a button or div. */
  const isCustomCombobox = (el) => !isControl(el) && attr(el, 'role') === 'combobox';
  const isFillable = (el) =>
    (isControl(el) && !SKIPPED_TYPES.has(el.type)) || isEditingHost(el) || isCustomCombobox(el);
  const isDisabled = (el) =>
    el.disabled || el.matches(':disabled') || attr(el, 'aria-disabled') === 'true';
  const isTextLike = (el) =>
    el.tagName === 'TEXTAREA' ||
    (el.tagName === 'INPUT' && !['checkbox', 'radio', 'file'].includes(el.type));

  function isSubmitter(el) {
    if (el.tagName === 'BUTTON') return el.type === 'submit';
    return el.tagName === 'INPUT' && (el.type === 'submit' || el.type === 'image');
  }

  function submitterText(el) {
    if (el.tagName === 'BUTTON') return textOf(el) || collapse(attr(el, 'aria-label')) || collapse(el.value);
    return collapse(el.value) || collapse(attr(el, 'alt')) || collapse(attr(el, 'aria-label')) || 'Submit';
  }

  // ---- The page model ---------------------------------------------------------------------

  /**
   * One walk of the document: forms, fillable controls and submit buttons in document order.
   */
  function scanDocument() {
    const forms = [];
    const controls = [];
    const submitters = [];
    eachElement(document, (el) => {
      if (el.tagName === 'FORM') forms.push(el);
      else if (isFillable(el) && !isWidgetPart(el)) controls.push(el);
      else if (isSubmitter(el)) submitters.push(el);
    });
    return { forms, controls, submitters };
  }

  /**
   * Fields: single controls, or radio / checkbox groups. `{kind, members, form}` where
   * `members` is the controls (one for a single control).
   */
  function buildFields(controls) {
    const groupKey = (el) => {
      if ((el.type !== 'radio' && el.type !== 'checkbox') || !el.name) return null;
      return el.form || el.getRootNode();
    };
    // name -> members, per owner (form, or the tree of a control outside any form)
    const byOwner = new Map();
    for (const el of controls) {
      const owner = groupKey(el);
      if (!owner) continue;
      if (!byOwner.has(owner)) byOwner.set(owner, new Map());
      const names = byOwner.get(owner);
      const key = `${el.type}\u0000${el.name}`;
      if (!names.has(key)) names.set(key, []);
      names.get(key).push(el);
    }
    const fields = [];
    const emitted = new Set();
    for (const el of controls) {
      const owner = groupKey(el);
      const members = owner ? byOwner.get(owner).get(`${el.type}\u0000${el.name}`) : [el];
      if (emitted.has(members)) continue;
      emitted.add(members);
      let kind = isEditingHost(el) ? 'contenteditable' : el.type;
      if (attr(el, 'role') === 'combobox' && (isCustomCombobox(el) || isTextLike(el))) kind = 'combobox';
      if (el.type === 'checkbox' && members.length >= 2) kind = 'checkbox-group';
      if (el.type === 'checkbox' && members.length === 1) kind = 'checkbox';
      const source = kind === 'combobox' ? choicesSelect(el) : null;
      const zone = kind === 'file' ? dropZoneOf(el) : null;
      const form =
        el.form || (source && source.form) || (zone && (zone.tagName === 'FORM' ? zone : zone.closest('form'))) ||
        (isControl(el) ? null : el.closest('form'));
      fields.push({ kind, members, el, form, source, zone });
    }
    return mergeSplitParts(mergeDateParts(fields));
  }

  // ---- Widgets ----------------------------------------------------------------------------
  //
  // Widget libraries hide the control a form submits behind their own UI. Each is told from
  // its own markers in the DOM (docs/src/forms/widgets.md lists them):
  // * select2: the <select class="select2-hidden-accessible"> stays the field, set natively
  //   with a change event (select2's documented way); its combobox is a picture of it.
  // * Choices.js: the <select data-choice> inside the .choices combobox holds only the chosen
  //   options, so the combobox is the field (picked from as a person does) and takes the
  //   select's labels, name and value.
  // * flatpickr (input.flatpickr-input) and the jQuery UI datepicker (input.hasDatepicker)
  //   keep the date in page JavaScript: `fill` answers them with `widget`, and the agent sets
  //   them through their own API in the page's world (widgets.js), then reads them back here.
  // * Dropzone: the hidden file input it appends to the page is the field of its drop zone,
  //   in the zone's form, named by the zone; the agent attaches files to it as to any file
  //   input, and Dropzone takes them from its change event.
  // The controls inside a calendar, and a text input inside a custom combobox (its filter
  // box), belong to the widget, not to the form.

  const CALENDARS = '.flatpickr-calendar, #ui-datepicker-div, .react-datepicker';

  function isWidgetPart(el) {
    if (el.closest(CALENDARS)) return true;
    if (isControl(el) && isTextLike(el) && el.parentElement) {
      const combo = el.parentElement.closest('[role=combobox]');
      if (combo && isCustomCombobox(combo)) return true;
    }
    if (isCustomCombobox(el)) {
      const container = el.closest('.select2-container');
      const select = container && container.previousElementSibling;
      if (select && select.tagName === 'SELECT' && select.classList.contains('select2-hidden-accessible')) return true;
    }
    return el.tagName === 'SELECT' && attr(el, 'data-choice') !== null && !!el.closest('.choices[role=combobox]');
  }

  /**
   * What a widget draws around its combobox input: react-select (1.x) shows the chosen
   * option beside an emptied input inside its `.Select`; else the control itself.
   */
  function widgetRoot(el) {
    return (isControl(el) && el.closest('.Select')) || el;
  }

  /** The text a combobox shows: its input's value, else what its widget shows. */
  function comboboxText(el) {
    if (!isControl(el)) return collapse(native.innerText.call(el));
    const own = collapse(el.value);
    const root = widgetRoot(el);
    if (own || root === el) return own;
    // react-select: the chosen options' labels (not its placeholder or clear button)
    return queryAll(root, '.Select-value-label')
      .map((v) => collapse(native.innerText.call(v)))
      .join(', ');
  }

  /** Whether a combobox takes several options (a multiple select behind it, a multi listbox). */
  function isMultiCombobox(field) {
    if (field.source) return field.source.multiple;
    const listbox = listboxOf(field.el);
    return (listbox && attr(listbox, 'aria-multiselectable') === 'true') || !!field.el.closest('.Select--multi');
  }

  /** The hidden select a Choices.js combobox stands in for, or null. */
  function choicesSelect(combo) {
    if (!combo.classList.contains('choices')) return null;
    return queryAll(combo, 'select[data-choice]')[0] || null;
  }

  /**
   * The drop zone a Dropzone file input belongs to, or null. Dropzone appends one hidden
   * file input per clickable zone to the end of the page, in the order it set the zones up
   * (document order), so the n-th input is the n-th zone's.
   */
  function dropZoneOf(el) {
    if (!el.classList.contains('dz-hidden-input')) return null;
    const inputs = queryAll(document, 'input.dz-hidden-input');
    const zones = queryAll(document, '.dz-clickable');
    return inputs.length === zones.length ? zones[inputs.indexOf(el)] || null : null;
  }

  /** A drop zone's labels: its own name, else the message it shows ("Drop files here"). */
  function dropZoneLabels(zone) {
    const labels = controlLabels(zone).filter((c) => c.source !== 'name' && c.source !== 'id');
    const message = queryAll(zone, '.dz-message')[0];
    const text = message ? labelText(textOf(message)) : '';
    if (text && !labels.some((c) => c.text === text)) labels.push({ source: 'text', text });
    return labels;
  }

  /** The date picker library driving a text input, or null. */
  function datePickerOf(el) {
    if (el.tagName !== 'INPUT') return null;
    if (el.classList.contains('flatpickr-input')) return 'flatpickr';
    if (el.classList.contains('hasDatepicker')) return 'jquery-ui-datepicker';
    return null;
  }

  // ---- Composite dates --------------------------------------------------------------------

  /** Which part of a date a control holds, from autocomplete, name, id or label; or null. */
  function datePart(el) {
    if (!(el.tagName === 'SELECT' || (el.tagName === 'INPUT' && ['text', 'number', 'tel', ''].includes(el.type)))) return null;
    const token = String(attr(el, 'autocomplete') || '').toLowerCase();
    const byToken = /(^|\s|-)(bday|cc-exp)-(day|month|year)$/.exec(token);
    if (byToken) return byToken[3];
    const words = (s) => String(s || '').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z]+/).filter(Boolean);
    const last = (s) => words(s).pop();
    const named = { day: 'day', dd: 'day', month: 'month', mm: 'month', year: 'year', yyyy: 'year', yy: 'year' };
    for (const source of [attr(el, 'name'), attr(el, 'id')]) {
      const w = last(source);
      if (w && named[w]) return named[w];
    }
    const labels = Array.from(el.labels || []).map((l) => norm(textOf(l, true)));
    for (const text of labels) if (named[text]) return named[text];
    const aria = norm(attr(el, 'aria-label'));
    return named[aria] || null;
  }

  /**
   * Day / month / year controls that together hold one date become ONE field of type
   * `date-parts` (members in page order, `parts` their roles): 2 or 3 controls with distinct
   * parts, next to each other, in a container (fieldset, group or wrapper) that holds only
   * them, including a year or both day and month.
   */
  function mergeDateParts(fields) {
    const out = [];
    for (let i = 0; i < fields.length; i++) {
      const run = [];
      for (let j = i; j < fields.length && run.length < 3; j++) {
        const f = fields[j];
        if (f.members.length !== 1 || f.form !== fields[i].form) break;
        const part = datePart(f.el);
        if (!part || run.some((r) => r.part === part)) break;
        run.push({ field: f, part });
      }
      const parts = run.map((r) => r.part);
      const whole = parts.includes('year') || (parts.includes('day') && parts.includes('month'));
      if (run.length >= 2 && whole) {
        const members = run.map((r) => r.field.el);
        const own = new Set(members);
        const box = commonAncestor(members);
        if (box && box.tagName !== 'FORM' && box.tagName !== 'BODY' && containsOnly(box, own)) {
          out.push({ kind: 'date-parts', members, el: members[0], form: fields[i].form, parts });
          i += run.length - 1;
          continue;
        }
      }
      out.push(fields[i]);
    }
    return out;
  }

  // ---- Split inputs -----------------------------------------------------------------------
  //
  // One value typed into a row of short boxes: a phone number in three, a card number in
  // four, a one-time code one character a box. A run of three or more text boxes, each
  // with a maxlength of at most 6, side by side in one wrapper that holds nothing else a
  // person fills, the boxes after the first with no label of their own, is one field of
  // type "split"; its value is the boxes' text joined, and `fill` spreads a value over
  // them by their lengths.

  const SPLIT_TYPES = new Set(['text', 'tel', 'number', 'password']);
  const isSplitBox = (el) =>
    el.tagName === 'INPUT' && SPLIT_TYPES.has(el.type) && el.maxLength >= 1 && el.maxLength <= 6;
  const hasOwnLabel = (el) =>
    (el.labels && el.labels.length > 0) || attr(el, 'aria-label') || attr(el, 'aria-labelledby');
  /** Controls in `node` a person cannot see (a widget's hidden copy of its value). */
  const unseenIn = (node) => controlsIn(node).filter((c) => !isVisible(c));

  function mergeSplitParts(fields) {
    const out = [];
    for (let i = 0; i < fields.length; i++) {
      // Grow the run while one wrapper below the form holds it; then it must be all that
      // wrapper holds for a person to fill.
      const run = [];
      for (let j = i; j < fields.length; j++) {
        const f = fields[j];
        const fits = f.members.length === 1 && f.kind !== 'date-parts' && f.form === fields[i].form && isSplitBox(f.el);
        if (!fits || (run.length > 0 && hasOwnLabel(f.el))) break;
        const wider = run.length > 0 ? commonAncestor([...run, f.el]) : f.el;
        if (!wider || wider.tagName === 'FORM' || wider.tagName === 'BODY') break;
        run.push(f.el);
      }
      const box = run.length >= 3 ? commonAncestor(run) : null;
      if (box && containsOnly(box, new Set(run))) {
        out.push({ kind: 'split', members: run, el: run[0], form: fields[i].form, box });
        i += run.length - 1;
        continue;
      }
      out.push(fields[i]);
    }
    return out;
  }

  /** A split field of one character a box: a one-time code or a PIN, a secret. */
  const isCodeBoxes = (field) => field.kind === 'split' && field.members.every((m) => m.maxLength === 1);

  /** A split field's labels: its first box's, else the text before its row. */
  function splitLabels(field) {
    const labels = controlLabels(field.el);
    if (labels.some((c) => c.source === 'label' || c.source.startsWith('aria'))) return labels;
    const own = new Set([...field.members, ...unseenIn(field.box.parentElement || field.box)]);
    const text = labelText(precedingText(field.box, own));
    return text ? [{ source: 'text', text }, ...labels] : labels;
  }

  /** Spreads `value` over a split field's boxes by their lengths (separators dropped). */
  function fillSplit(field, value) {
    const wanted = wantedOne(value);
    if (wanted === null) return failure('expected text');
    const chars = Array.from(wanted.replace(/[\s\-./()+]/g, ''));
    const sizes = field.members.map((m) => m.maxLength);
    const total = sizes.reduce((a, b) => a + b, 0);
    if (chars.length !== total) {
      return failure(`expected ${total} characters for ${sizes.length} boxes of ${sizes.join(' + ')}`);
    }
    let at = 0;
    for (const [i, el] of field.members.entries()) {
      const part = chars.slice(at, at + sizes[i]).join('');
      const outcome = fillText(el, part, false);
      at += sizes[i];
      if (!outcome.ok) return failure(`box ${i + 1}: ${outcome.error}`);
      // Split-input scripts move on and copy the value out on keyup, as the person types.
      el.dispatchEvent(new KeyboardEvent('keyup', { key: part.slice(-1), bubbles: true, composed: true }));
    }
    return success();
  }

  const isGroup = (field) => field.kind === 'radio' || field.kind === 'checkbox-group';
  /** Several controls named as one: a group, a date in parts, a split input. */
  const isCompound = (field) => isGroup(field) || field.kind === 'date-parts' || field.kind === 'split';

  // ---- Labels -----------------------------------------------------------------------------

  /** Controls inside `node` (fillable ones), for "contains only this control" checks. */
  const controlsIn = (node) => queryAll(node, 'input,select,textarea').filter(isFillable);
  const containsOnly = (node, own) => controlsIn(node).every((c) => own.has(c));

  /** Whether `node` may hold a label-like text before a control. */
  const TEXT_HOLDERS = new Set([
    'P', 'SPAN', 'DIV', 'LABEL', 'B', 'STRONG', 'EM', 'I', 'SMALL', 'FONT', 'H1', 'H2', 'H3',
    'H4', 'H5', 'H6', 'DT', 'TD', 'TH', 'LEGEND',
  ]);

  /**
   * The text right before `start` (a control, or the wrapper of a group): the previous table
   * cell, `<dt>`, or a previous sibling text / text element, climbing at most two wrappers
   * that contain only `own` controls.
   */
  function precedingText(start, own) {
    const cell = start.closest('td,th,dd');
    if (cell && containsOnly(cell, own)) {
      const prev = cell.previousElementSibling;
      if (prev && (prev.tagName === 'TD' || prev.tagName === 'TH' || prev.tagName === 'DT')) {
        if (controlsIn(prev).length === 0) return shortText(textOf(prev));
      }
      // The question on the row above (`<tr><td>Date format</td></tr><tr><td>(options)`).
      const row = cell.tagName === 'DD' ? null : cell.parentElement;
      if (!prev && row && row.tagName === 'TR') {
        const above = row.previousElementSibling;
        if (above && above.tagName === 'TR' && controlsIn(above).length === 0) {
          const text = shortText(textOf(above));
          if (text) return text;
        }
      }
    }
    let node = start;
    for (let level = 0; node && level < 3; level++) {
      for (let prev = node.previousSibling, steps = 0; prev && steps < 4; prev = prev.previousSibling) {
        if (prev.nodeType === Node.TEXT_NODE) {
          const text = collapse(prev.nodeValue);
          if (text) return shortText(text);
          continue;
        }
        if (prev.nodeType !== Node.ELEMENT_NODE) continue;
        steps++;
        if (prev.tagName === 'BR') continue;
        if (controlsIn(prev).length > 0 || isControl(prev)) return '';
        if (!TEXT_HOLDERS.has(prev.tagName)) return '';
        // a label of another control is that control's name
        if (prev.tagName === 'LABEL' && prev.control && !own.has(prev.control)) return '';
        const text = textOf(prev);
        if (text) return shortText(text);
      }
      const parent = node.parentElement;
      if (!parent || parent.tagName === 'FORM' || parent.tagName === 'BODY' || !containsOnly(parent, own)) break;
      node = parent;
    }
    return '';
  }

  const shortText = (text) => (text.length <= 80 ? text : '');

  /** Text right after a checkbox or radio (`<input type=radio> Yes`). */
  function followingText(el) {
    for (let next = el.nextSibling; next; next = next.nextSibling) {
      if (next.nodeType === Node.TEXT_NODE) {
        const text = collapse(next.nodeValue);
        if (text) return shortText(text);
        continue;
      }
      if (next.nodeType !== Node.ELEMENT_NODE || isControl(next) || controlsIn(next).length) return '';
      if (next.tagName === 'BR') return '';
      const text = textOf(next);
      if (text) return shortText(text);
    }
    return '';
  }

  /** The label texts of one control, strongest first: [{source, text}]. */
  function controlLabels(el) {
    const own = new Set([el]);
    const out = [];
    const add = (source, text) => {
      const clean = labelText(text);
      if (clean && !out.some((c) => c.source === source && c.text === clean)) out.push({ source, text: clean });
    };
    add('aria-labelledby', textOfIds(el, attr(el, 'aria-labelledby')));
    add('aria-label', attr(el, 'aria-label'));
    for (const label of Array.from(el.labels || [])) {
      // `<label class="error" for=…>` is a validation message, not the field's name.
      if (!isErrorElement(label)) add('label', textOf(label, true));
    }
    add('title', attr(el, 'title'));
    add('placeholder', attr(el, 'placeholder') || attr(el, 'aria-placeholder') || attr(el, 'data-placeholder'));
    if (!out.some((c) => c.source === 'label' || c.source.startsWith('aria'))) {
      add('text', precedingText(widgetRoot(el), own));
      if (el.type === 'checkbox' || el.type === 'radio') add('text', followingText(el));
    }
    add('name', attr(el, 'name'));
    add('id', attr(el, 'id'));
    return out;
  }

  /** The smallest common ancestor of `nodes`. */
  function commonAncestor(nodes) {
    let anc = nodes[0].parentElement;
    while (anc && !nodes.every((n) => anc.contains(n))) anc = anc.parentElement;
    return anc;
  }

  /**
   * Names of a group: a `<fieldset>`'s legend and a `role=radiogroup|group` element's aria
   * name, when that container holds only the group's controls.
   */
  function legendTexts(own) {
    const members = Array.from(own);
    const texts = [];
    // The container names the group when the group is the only choice in it: text inputs
    // beside it (revealed when an option is picked) do not change the question.
    const namesGroup = (box) =>
      members.every((m) => box.contains(m)) &&
      controlsIn(box).every((c) => own.has(c) || (c.type !== 'radio' && c.type !== 'checkbox'));
    const fieldset = members[0].closest('fieldset');
    if (fieldset && namesGroup(fieldset)) {
      const legend = Array.from(fieldset.children).find((c) => c.tagName === 'LEGEND');
      if (legend) texts.push(textOf(legend, true));
    }
    const group = members[0].closest('[role=radiogroup],[role=group]');
    if (group && namesGroup(group)) {
      texts.push(textOfIds(group, attr(group, 'aria-labelledby')));
      texts.push(collapse(attr(group, 'aria-label')));
    }
    return texts.filter(Boolean);
  }

  /**
   * A `<label>` that names no control (its `for` names nothing, or it has no `for` and wraps
   * no control), the nearest before the group with no other control in between, looked for
   * in the group's container and up to four containers above (a Bootstrap column beside it,
   * the table cell left of a nested table of options), never outside `within`: the group's
   * question, as a person reads it (`<label>Gender</label> M: <input type=radio> F: <input
   * type=radio>`).
   */
  function orphanLabelBefore(field, within) {
    const own = new Set(field.members);
    const first = field.members[0];
    const before = (a, b) => Boolean(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);
    let scope = commonAncestor(field.members);
    for (let level = 0; scope && level < 5; level++, scope = scope.parentElement) {
      const labels = queryAll(scope, 'label').filter(
        (l) => !l.control && !isErrorElement(l) && before(l, first) && isVisible(l) && (!within || within.contains(l)),
      );
      const label = labels[labels.length - 1];
      if (label) {
        const between = controlsIn(scope).some((c) => !own.has(c) && before(label, c) && before(c, first));
        return between ? '' : shortText(textOf(label, true));
      }
      if (scope.tagName === 'FORM') break;
    }
    return '';
  }

  /** The label candidates of a radio or checkbox group. */
  function groupLabels(field) {
    const own = new Set(field.members);
    const legends = legendTexts(own).map((text) => ({ source: 'legend', text: labelText(text) }));
    // Inside a fieldset whose legend names a section ("Step 1 of 3"), a label that names no
    // control right before the group is the nearer, truer question.
    const fieldset = legends.length ? field.members[0].closest('fieldset') : null;
    const orphan = labelText(orphanLabelBefore(field, fieldset));
    const out = orphan ? [{ source: 'label', text: orphan }, ...legends] : legends;
    if (!out.length) {
      // text before the group: start at the first member's wrapping label if it has one
      const first = field.members[0];
      const wrapping = first.closest('label');
      const start = wrapping && containsOnly(wrapping, own) ? wrapping : first;
      const text = labelText(precedingText(start, own));
      if (text) out.push({ source: 'text', text });
    }
    const name = labelText(field.members[0].name);
    if (name) out.push({ source: 'name', text: name });
    return out.filter((c) => c.text);
  }

  /** The visible name of one radio or checkbox of a group. */
  function memberLabel(el) {
    const labels = controlLabels(el);
    const best = labels.find((c) => c.source !== 'name' && c.source !== 'id');
    return best ? best.text : collapse(el.value);
  }

  // ---- Values, options, constraints, validity ---------------------------------------------

  /**
   * The value a group member is reported by: its `value`, or, when it has no value
   * attribute (the browser then sends "on" for every option), its label, so a report can
   * still say which option is chosen.
   */
  const memberValue = (m) => (attr(m, 'value') === null ? memberLabel(m) || m.value : m.value);

  /** True when two options of a group send the same value: the site cannot tell them apart. */
  const indistinct = (field) => new Set(field.members.map((m) => m.value)).size < field.members.length;

  function fieldValue(field) {
    const el = field.el;
    switch (field.kind) {
      case 'radio': {
        const checked = field.members.find((m) => m.checked);
        return checked ? memberValue(checked) : '';
      }
      case 'checkbox-group':
        return field.members.filter((m) => m.checked).map(memberValue);
      case 'date-parts':
        return dateValue(field);
      case 'split':
        return field.members.map((m) => m.value).join('');
      case 'checkbox':
        return el.checked;
      case 'select-multiple':
        return Array.from(el.selectedOptions).map((o) => o.value);
      case 'password':
        return el.value ? MASK : '';
      case 'file': {
        // Dropzone takes the files and empties its input: the zone lists what it holds.
        const names = field.zone
          ? queryAll(field.zone, '[data-dz-name]').map((n) => collapse(n.textContent))
          : Array.from(el.files || []).map((f) => f.name);
        return el.multiple ? names : names[0] || '';
      }
      case 'contenteditable':
        return editorText(el);
      case 'combobox':
        if (field.source) {
          const chosen = Array.from(field.source.selectedOptions).map((o) => o.value);
          return field.source.multiple ? chosen : chosen[0] || '';
        }
        return comboboxText(el);
      default:
        return el.value;
    }
  }

  /**
   * A date in parts as one value: `YYYY-MM-DD` (or `YYYY-MM`) when every part holds a
   * number, else the parts as the page shows them ("31 /  / 2030"), or '' when all are empty.
   */
  function dateValue(field) {
    const values = field.members.map((m) => collapse(m.value));
    if (values.every((v) => v === '')) return '';
    const at = (part) => values[field.parts.indexOf(part)];
    const digits = (v, n) => (/^\d+$/.test(v || '') ? v.padStart(n, '0') : null);
    // A two-digit year (a card's expiry) is this century's.
    const year = at('year') && at('year').length === 2 ? `20${at('year')}` : at('year');
    const [y, m, d] = [digits(year, 4), digits(at('month'), 2), digits(at('day'), 2)];
    if (y && m && (d || !field.parts.includes('day'))) return d ? `${y}-${m}-${d}` : `${y}-${m}`;
    return values.join(' / ');
  }

  const isEmpty = (value) => value === false || value === '' || (Array.isArray(value) && value.length === 0);

  const optgroupOf = (option) =>
    option.parentElement && option.parentElement.tagName === 'OPTGROUP'
      ? labelText(option.parentElement.label)
      : undefined;

  function optionInfo(value, label, { selected, disabled, group }) {
    const info = { value, label };
    if (group) info.group = group;
    info.selected = !!selected;
    if (disabled) info.disabled = true;
    return info;
  }

  function fieldOptions(field) {
    const el = field.el;
    if (isGroup(field)) {
      return field.members.map((m) =>
        optionInfo(memberValue(m), memberLabel(m), { selected: m.checked, disabled: isDisabled(m) }),
      );
    }
    if (el.tagName === 'SELECT') {
      return Array.from(el.options).map((o) =>
        optionInfo(o.value, collapse(o.label || o.text), {
          selected: o.selected,
          disabled: o.disabled || (o.parentElement.tagName === 'OPTGROUP' && o.parentElement.disabled),
          group: optgroupOf(o),
        }),
      );
    }
    if (field.kind === 'combobox') {
      return comboboxOptions(el, false).map((o) => optionInfo(o.value, o.label, { selected: o.selected }));
    }
    if (el.tagName === 'INPUT' && el.list) {
      return Array.from(el.list.options).map((o) =>
        optionInfo(o.value, collapse(o.label || o.text || o.value), { disabled: o.disabled }),
      );
    }
    return [];
  }

  function fieldConstraints(field) {
    const el = field.el;
    const out = {};
    if (isCompound(field)) return out;
    for (const [name, key] of [['pattern', 'pattern'], ['min', 'min'], ['max', 'max'], ['step', 'step']]) {
      const v = attr(el, name);
      if (v !== null && v !== '') out[key] = v;
    }
    for (const [name, key] of [['minlength', 'minLength'], ['maxlength', 'maxLength']]) {
      const n = Number.parseInt(attr(el, name), 10);
      if (Number.isInteger(n) && n >= 0) out[key] = n;
    }
    const accept = attr(el, 'accept');
    if (accept) out.accept = accept;
    if (el.multiple) out.multiple = true;
    const autocomplete = attr(el, 'autocomplete');
    if (autocomplete) out.autocomplete = autocomplete;
    return out;
  }

  function fieldValidity(field) {
    const invalid = field.members.find((m) => m.validity && !m.validity.valid);
    return invalid ? { valid: false, message: invalid.validationMessage || '' } : { valid: true };
  }

  // ---- Custom error texts -----------------------------------------------------------------

  const FIELD_ERROR_SELECTOR =
    '[role=alert],.error,.invalid-feedback,[class*=error],[class*=invalid-feedback],[class*=Error]';
  const FORM_ERROR_SELECTOR = '[role=alert],.alert-danger,.form-error,.errors';
  /** Where pages list every error with a link to its field (`<a href="#email">`). */
  const ERROR_SUMMARY_SELECTOR =
    '[role=alert],[class*=error-summary],[class*=error_summary],[class*=errorSummary],.validation-summary-errors,.errorlist';

  /** A message element (not a wrapper of controls): an error text by role or class. */
  const isErrorElement = (el) =>
    el.nodeType === Node.ELEMENT_NODE &&
    !isControl(el) &&
    el.matches(FIELD_ERROR_SELECTOR) &&
    controlsIn(el).length === 0;

  /** A control the page marked as wrong: `aria-invalid`, or an error class. */
  const isMarked = (el) => attr(el, 'aria-invalid') === 'true' || /error|invalid/i.test(String(el.className || ''));

  /**
   * Error texts of error summaries, by the control their link points at (`#id`). Built once
   * per inspection; the links are claimed so the summary is not a form error too.
   */
  function summaryErrors() {
    const byControl = new Map();
    eachElement(document, (el) => {
      if (el.tagName !== 'A' || !el.closest(ERROR_SUMMARY_SELECTOR) || !isVisible(el)) return;
      const href = attr(el, 'href') || '';
      if (!href.startsWith('#') || href.length < 2) return;
      let target;
      try {
        target = el.getRootNode().getElementById(decodeURIComponent(href.slice(1)));
      } catch (_) {
        return;
      }
      if (!target) return;
      // A link to a group's fieldset or wrapper means its first control.
      const control = isFillable(target) ? target : controlsIn(target)[0];
      if (!control || byControl.has(control)) return;
      byControl.set(control, el);
    });
    return byControl;
  }

  /**
   * The page's own error text for a field, and the elements it came from (so they are not
   * reported again as form errors). Looked for as pages show them, nearest first:
   * `aria-errormessage` / `aria-describedby` (with `aria-invalid`), an error `<label for>`
   * (what validation libraries insert), an error inside the field's label, an error element
   * right before or after the control, one in a wrapper that holds only this field, one of
   * the enclosing fieldset (a date's day/month/year share it), and last an error summary's
   * link to the control.
   */
  function customError(field, claimed, summary) {
    const own = new Set(field.members);
    const texts = [];
    const taken = [];
    const take = (node) => {
      if (taken.some((t) => t.contains(node))) return;
      taken.push(node);
      claimed.add(node);
      const text = textOf(node);
      if (text && !texts.includes(text)) texts.push(text);
    };
    for (const m of field.members) {
      const invalid = attr(m, 'aria-invalid') === 'true';
      for (const [attrName, needsInvalid] of [['aria-errormessage', false], ['aria-describedby', true]]) {
        if (needsInvalid && !invalid) continue;
        for (const id of String(attr(m, attrName) || '').split(/\s+/).filter(Boolean)) {
          const target = m.getRootNode().getElementById(id);
          if (target && (invalid || isVisible(target))) take(target);
        }
      }
      for (const label of Array.from(m.labels || [])) {
        if (!isVisible(label)) continue;
        if (isErrorElement(label)) take(label);
        else for (const e of queryAll(label, FIELD_ERROR_SELECTOR)) if (isErrorElement(e) && isVisible(e)) take(e);
      }
    }
    if (!texts.length) {
      for (const m of field.members) {
        for (const step of ['previousElementSibling', 'nextElementSibling']) {
          let sib = m[step];
          for (let n = 0; sib && n < 2; n++, sib = sib[step]) {
            if (isControl(sib) || controlsIn(sib).length) break;
            if (sib.tagName === 'LABEL' && sib.control && !own.has(sib.control)) break;
            if (isErrorElement(sib) && isVisible(sib)) take(sib);
          }
        }
      }
    }
    if (!texts.length) {
      const anchor = field.members.length > 1 ? commonAncestor(field.members) : field.el.parentElement;
      let box = anchor;
      for (let level = 0; box && level < 3 && !texts.length; level++, box = box.parentElement) {
        if (box.tagName === 'FORM' || box.tagName === 'BODY' || !containsOnly(box, own)) break;
        for (const e of queryAll(box, FIELD_ERROR_SELECTOR)) {
          if (!isErrorElement(e) || !isVisible(e)) continue;
          if (e.tagName === 'LABEL' && e.control && !own.has(e.control)) continue;
          take(e);
        }
      }
    }
    if (!texts.length) {
      const set = field.el.closest('fieldset,[role=group],[role=radiogroup]');
      const inSet = set ? controlsIn(set) : [];
      // The set's error belongs to the members the page marked, or to all when none is.
      if (set && (field.members.some(isMarked) || !inSet.some(isMarked))) {
        for (const id of String(attr(set, 'aria-describedby') || '').split(/\s+/).filter(Boolean)) {
          const target = set.getRootNode().getElementById(id);
          if (target && isErrorElement(target) && isVisible(target)) take(target);
        }
        for (const e of queryAll(set, FIELD_ERROR_SELECTOR)) {
          if (!isErrorElement(e) || !isVisible(e)) continue;
          // Its own message, not the message of one control inside it.
          const labelOf = e.tagName === 'LABEL' ? e.control : null;
          if (labelOf && !own.has(labelOf)) continue;
          if (e.closest('fieldset,[role=group],[role=radiogroup]') !== set) continue;
          take(e);
        }
      }
    }
    const link = field.members.map((m) => summary.get(m)).find(Boolean);
    if (link) {
      if (!texts.length) take(link);
      else claimed.add(link);
    }
    return texts.join(' ');
  }

  /** Visible page-level error texts not attributed to a field. */
  function formErrors(claimed) {
    const found = [];
    eachElement(document, (el) => {
      if (!el.matches(FORM_ERROR_SELECTOR) || !isVisible(el)) return;
      if (found.some((f) => f.contains(el))) return;
      if (Array.from(claimed).some((c) => c === el || c.contains(el) || el.contains(c))) return;
      found.push(el);
    });
    const texts = found.map(textOf).filter(Boolean);
    return texts.filter((t, i) => texts.indexOf(t) === i);
  }

  // ---- inspect ----------------------------------------------------------------------------

  /** refs[ref] = a field {kind, members, el, form}; rebuilt by every inspect(). */
  let refs = [];

  function formInfo(form, index, submitters, fields) {
    const info = { index };
    const id = attr(form, 'id');
    if (id) info.id = id;
    const name = attr(form, 'name');
    if (name) info.name = name;
    info.action = native.formAction.call(form);
    info.method = native.formMethod.call(form);
    info.noValidate = native.formNoValidate.call(form);
    // Only buttons a person could press (what `submit` clicks).
    info.submitLabels = submitters
      .filter((b) => b.form === form && isVisible(b) && !b.disabled)
      .map(submitterText)
      .filter(Boolean);
    info.fieldCount = fields.filter((f) => f.form === form).length;
    return info;
  }

  function fieldInfo(field, ref, forms, claimed, summary) {
    const el = field.el;
    const group = isGroup(field);
    const labels = field.zone
      ? dropZoneLabels(field.zone)
      : field.kind === 'split'
        ? splitLabels(field)
        : isCompound(field)
          ? groupLabels(field)
          : controlLabels(field.source || el);
    const value = fieldValue(field);
    const validity = fieldValidity(field);
    const info = {
      ref,
      form: field.form ? forms.indexOf(field.form) : null,
      tag: el.tagName.toLowerCase(),
      type: field.kind,
    };
    if (info.form === -1) info.form = null;
    const name = attr(field.source || el, 'name');
    if (name) info.name = name;
    const widget = datePickerOf(el);
    if (widget) info.widget = widget;
    const id = isCompound(field) ? null : attr(el, 'id');
    if (id) info.id = id;
    info.labels = labels;
    info.label = labels.length ? labels[0].text : '';
    info.required = field.members.some((m) => m.required || attr(m, 'aria-required') === 'true');
    info.disabled = field.members.every(isDisabled);
    info.readOnly = !isCompound(field) && (!!el.readOnly || attr(el, 'aria-readonly') === 'true');
    info.visible =
      (field.zone && isVisible(field.zone)) ||
      field.members.some((m) => isVisible(m) || Array.from(m.labels || []).some(isVisible));
    info.value = value;
    // A date with a part left out is not filled in.
    info.empty = field.kind === 'date-parts' || field.kind === 'split' ? field.members.some((m) => collapse(m.value) === '') : isEmpty(value);
    const options = fieldOptions(field);
    if (options.length) info.options = options;
    info.constraints = fieldConstraints(field);
    info.valid = validity.valid;
    if (!validity.valid) info.validationMessage = validity.message;
    const error = customError(field, claimed, summary);
    if (error) info.error = error;
    if (group && indistinct(field)) info.indistinct = true;
    // The one rule of what a picture blanks and a review masks.
    if (field.members.some(isSecret) || isCodeBoxes(field)) info.secret = true;
    if (field.parts) info.parts = field.parts;
    return info;
  }

  function pageText() {
    const body = native.documentBody.call(document);
    if (!body) return '';
    const text = String(native.innerText.call(body) || '').trim();
    return Array.from(text).slice(0, 1000).join('');
  }

  function inspect() {
    const { forms, controls, submitters } = scanDocument();
    const fields = buildFields(controls);
    refs = fields;
    const claimed = new Set();
    const summary = summaryErrors();
    const fieldInfos = fields.map((field, ref) => fieldInfo(field, ref, forms, claimed, summary));
    return {
      url: location.href,
      title: collapse(native.documentTitle.call(document)),
      forms: forms.map((form, index) => formInfo(form, index, submitters, fields)),
      fields: fieldInfos,
      formErrors: formErrors(claimed),
      text: pageText(),
      httpStatus: responseStatus(),
    };
  }

  // The HTTP status of the document's own response (0 or null when unknown: about:blank,
  // a document written by script).
  function responseStatus() {
    try {
      const entry = performance.getEntriesByType('navigation')[0];
      return entry && entry.responseStatus ? entry.responseStatus : null;
    } catch (_) {
      return null;
    }
  }

  // ---- fill -------------------------------------------------------------------------------

  function setNativeValue(el, value) {
    if (el.tagName === 'TEXTAREA') native.textareaValue.call(el, value);
    else if (el.tagName === 'SELECT') native.selectValue.call(el, value);
    else native.inputValue.call(el, value);
  }

  function fire(el, type) {
    const init = { bubbles: true, composed: true };
    const event =
      type === 'input' && el.tagName !== 'SELECT'
        ? new InputEvent('input', { ...init, inputType: 'insertReplacementText' })
        : new Event(type, init);
    el.dispatchEvent(event);
  }

  const activeElementOf = (el) => el.getRootNode().activeElement;

  /** Leaves the control as a user would: a real blur if it has the focus, else a synthetic one. */
  function leave(el) {
    let blurred = false;
    const mark = () => {
      blurred = true;
    };
    el.addEventListener('blur', mark, { once: true });
    if (activeElementOf(el) === el) el.blur();
    el.removeEventListener('blur', mark);
    if (!blurred) {
      el.dispatchEvent(new FocusEvent('blur', { relatedTarget: null }));
      el.dispatchEvent(new FocusEvent('focusout', { bubbles: true, composed: true, relatedTarget: null }));
    }
  }

  const failure = (error, extra) => ({ ok: false, error, ...extra });
  const success = () => ({ ok: true });

  /** Matches a wanted value to an option: exact value, label, value ignoring case, label prefix. */
  function matchOption(options, want) {
    const w = norm(want);
    return (
      options.find((o) => o.value === want) ||
      options.find((o) => norm(o.label) === w) ||
      options.find((o) => norm(o.value) === w) ||
      (w ? options.find((o) => norm(o.label).startsWith(w)) : undefined) ||
      null
    );
  }

  function noOption(want, options) {
    const names = options.map((o) => o.label || o.value);
    const shown = names.slice(0, 20).join(', ') + (names.length > 20 ? ', …' : '');
    return failure(`no option "${want}" (options: ${shown})`);
  }

  /** One wanted string from a fill value (a one-element list is fine), or null. */
  function wantedOne(value) {
    if (Array.isArray(value) && value.length === 1) value = value[0];
    return typeof value === 'string' || typeof value === 'number' ? String(value) : null;
  }

  /** A list of wanted strings from a fill value (a single string is a list of one), or null. */
  function wantedList(value) {
    if (Array.isArray(value)) return value.map(String);
    if (typeof value === 'string') return value === '' ? [] : [value];
    return null;
  }

  function parseBool(value) {
    if (typeof value === 'boolean') return value;
    const s = norm(value);
    if (['true', 'yes', 'on', 'checked', '1', 'x'].includes(s)) return true;
    if (['false', 'no', 'off', 'unchecked', '0', ''].includes(s)) return false;
    return null;
  }

  /** What the browser itself makes of `value` in a fresh input of the same type. */
  function sanitised(el, value) {
    const probe = document.createElement('input');
    probe.type = el.type;
    for (const name of ['min', 'max', 'step']) {
      const v = attr(el, name);
      if (v !== null) probe.setAttribute(name, v);
    }
    native.inputValue.call(probe, value);
    return probe.value;
  }

  /** The same value up to the browser's own normalisation (line breaks, trimming, case). */
  function sameValue(el, actual, wanted) {
    if (actual === wanted) return true;
    if (el.tagName === 'TEXTAREA') return actual === wanted.replace(/\r\n?/g, '\n');
    const stripped = wanted.replace(/[\r\n]/g, '');
    if (actual === stripped || actual === stripped.trim()) return true;
    return el.type === 'color' && actual === wanted.toLowerCase();
  }

  function fillText(el, value, typed) {
    const wanted = wantedOne(value);
    if (wanted === null) return failure(`expected text for this ${el.type} field`);
    if (!typed) {
      setNativeValue(el, wanted);
      fire(el, 'input');
    }
    fire(el, 'change');
    leave(el);
    if (sameValue(el, el.value, wanted)) return success();
    const kind = el.tagName === 'TEXTAREA' ? 'textarea' : el.type;
    if (el.tagName === 'INPUT' && !sameValue(el, sanitised(el, wanted), wanted)) {
      const expected = EXPECTED_FORMAT[kind];
      return failure(`rejected by the ${kind} input` + (expected ? ` (expected ${expected})` : ''));
    }
    const shown = kind === 'password' ? '' : ` (it holds "${el.value}")`;
    if (typed) return failure(`the typed value did not stick${shown}`);
    return failure(`the page reset the value${shown}`, TYPABLE.has(kind) ? { retryTyping: true } : {});
  }

  function fillCheckbox(el, value) {
    const want = parseBool(value);
    if (want === null) return failure(`expected true or false, got ${JSON.stringify(value)}`);
    if (el.checked !== want) el.click();
    if (el.checked !== want) return failure('the page did not accept the change');
    return success();
  }

  function fillRadio(field, value) {
    const want = wantedOne(value);
    if (want === null) return failure('expected one option');
    const options = field.members.map((m) => ({ value: m.value, label: memberLabel(m), el: m }));
    const picked = matchOption(options, want);
    if (!picked) return noOption(want, options);
    if (isDisabled(picked.el)) return failure(`option "${picked.label}" is disabled`);
    if (!picked.el.checked) picked.el.click();
    return picked.el.checked ? success() : failure('the page did not accept the change');
  }

  function fillCheckboxGroup(field, value) {
    const list = wantedList(value);
    if (!list) return failure('expected a list of options');
    const options = field.members.map((m) => ({ value: m.value, label: memberLabel(m), el: m }));
    const picked = [];
    for (const want of list) {
      const option = matchOption(options, want);
      if (!option) return noOption(want, options);
      picked.push(option.el);
    }
    for (const o of options) {
      const want = picked.includes(o.el);
      if (o.el.checked === want) continue;
      if (isDisabled(o.el)) return failure(`option "${o.label}" is disabled`);
      o.el.click();
    }
    const wrong = options.filter((o) => o.el.checked !== picked.includes(o.el));
    return wrong.length ? failure('the page did not accept the change') : success();
  }

  function fillSelect(el, value) {
    const single = el.multiple ? null : wantedOne(value);
    const list = el.multiple ? wantedList(value) : single === null ? null : [single];
    if (!list) return failure(el.multiple ? 'expected a list of options' : 'expected one option');
    const options = Array.from(el.options).map((o) => ({ value: o.value, label: collapse(o.label || o.text), el: o }));
    const picked = [];
    for (const want of list) {
      const option = matchOption(options, want);
      if (!option) return noOption(want, options);
      if (option.el.disabled) return failure(`option "${option.label}" is disabled`);
      picked.push(option.el);
    }
    if (el.multiple) {
      for (const o of options) native.optionSelected.call(o.el, picked.includes(o.el));
    } else {
      setNativeValue(el, picked[0].value);
      if (el.selectedOptions[0] !== picked[0]) native.optionSelected.call(picked[0], true);
    }
    fire(el, 'input');
    fire(el, 'change');
    leave(el);
    const selected = Array.from(el.selectedOptions);
    const ok = selected.length === picked.length && picked.every((o) => selected.includes(o));
    return ok ? success() : failure('the page did not accept the change');
  }

  /**
   * Fills a date in parts from `{day, month, year}` (the agent splits the caller's value):
   * each part into its control, a two-digit year where the control takes two.
   */
  function fillDateParts(field, value) {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return failure('expected the parts of a date');
    for (let i = 0; i < field.members.length; i++) {
      const el = field.members[i];
      const part = field.parts[i];
      let want = value[part];
      if (want == null) return failure(`the value has no ${part}`);
      want = String(want);
      if (part === 'year' && el.maxLength === 2 && want.length === 4) want = want.slice(2);
      const outcome = el.tagName === 'SELECT' ? fillSelect(el, want) : fillText(el, want, false);
      if (!outcome.ok) return failure(`${part}: ${outcome.error}`);
    }
    return success();
  }

  /** The text of a rich-text field, as a person reads it. */
  function editorText(el) {
    return native.innerText.call(el).replace(/\u00a0/g, ' ').replace(/\n+$/, '');
  }

  /**
   * A rich-text field only takes typed input (editors keep their own model of the text):
   * ask for Input.insertText, then verify what it shows.
   */
  function fillEditor(el, value, typed) {
    const wanted = wantedOne(value);
    if (wanted === null) return failure('expected text for this rich-text field');
    if (!typed) return failure('a rich-text field takes typed input', { retryTyping: true });
    fire(el, 'change');
    leave(el);
    const shown = collapse(editorText(el));
    if (shown === collapse(wanted)) return success();
    return failure(`the typed text did not stick (it shows "${shown}")`);
  }

  // A field disabled until another box is ticked: the form's unticked boxes are tried as a
  // person would, with a click — the one whose aria-controls holds the field first, then the
  // three nearest before it — and a box is kept ticked only when the field is enabled after
  // it (handlers that enable on click or change run before click() returns).
  function enableByTicking(field) {
    const form = field.el.form || field.el.closest('form');
    const boxes = queryAll(form || document, 'input[type=checkbox]').filter(
      (b) => !field.members.includes(b) && !b.checked && !isDisabled(b) && isVisible(b),
    );
    const controls = (b) =>
      (attr(b, 'aria-controls') || '')
        .split(/\s+/)
        .filter(Boolean)
        .some((id) => {
          const target = document.getElementById(id);
          return target && field.members.some((m) => target.contains(m));
        });
    const before = (b) => Boolean(b.compareDocumentPosition(field.el) & Node.DOCUMENT_POSITION_FOLLOWING);
    const nearest = boxes.filter((b) => !controls(b) && before(b)).reverse().slice(0, 3);
    for (const box of [...boxes.filter(controls), ...nearest]) {
      box.click();
      if (!field.members.every(isDisabled)) return box;
      if (box.checked) box.click();
    }
    return null;
  }

  function fillOne(assignment) {
    const field = refs[assignment.ref];
    if (!field) return failure(`unknown ref ${assignment.ref} (inspect again)`);
    if (!field.members.every((m) => m.isConnected)) return failure('the field is gone (the page changed; inspect again)');
    if (field.members.every(isDisabled)) {
      const box = field.kind === 'file' ? null : enableByTicking(field);
      if (!box) return failure('the field is disabled, and no box on the form enables it');
      return { ...fillEnabled(field, assignment), enabledBy: memberLabel(box) };
    }
    return fillEnabled(field, assignment);
  }

  function fillEnabled(field, assignment) {
    const el = field.el;
    if (field.kind === 'file') return failure('file inputs are filled by the agent');
    const picker = datePickerOf(el);
    if (picker) return failure('a date picker is set through its own calendar', { widget: picker });
    if (isTextLike(el) && el.readOnly) return failure('the field is read-only');
    if (attr(el, 'aria-readonly') === 'true') return failure('the field is read-only');
    const value = assignment.value;
    switch (field.kind) {
      case 'radio':
        return fillRadio(field, value);
      case 'checkbox-group':
        return fillCheckboxGroup(field, value);
      case 'checkbox':
        return fillCheckbox(el, value);
      case 'date-parts':
        return fillDateParts(field, value);
      case 'split':
        return fillSplit(field, value);
      case 'select-one':
      case 'select-multiple':
        return fillSelect(el, value);
      case 'contenteditable':
        return fillEditor(el, value, assignment.typed === true);
      case 'combobox': {
        const list = isMultiCombobox(field) ? wantedList(value) : null;
        if (wantedOne(value) === null && !(list && list.length)) {
          return failure(isMultiCombobox(field) ? 'expected a list of options' : 'expected one option');
        }
        return failure('a combobox is opened and picked from', { combobox: true });
      }
      default:
        return fillText(el, value, assignment.typed === true);
    }
  }

  function fill(assignments) {
    return Array.from(assignments || []).map((assignment) => {
      let outcome;
      try {
        outcome = fillOne(assignment);
      } catch (e) {
        outcome = failure(`fill failed: ${e && e.message ? e.message : String(e)}`);
      }
      return { ref: assignment.ref, ...outcome };
    });
  }

  // ---- Comboboxes (ARIA) ------------------------------------------------------------------
  //
  // A combobox is driven the way a person does it: open it (click), type to filter when it
  // is a text input (the Rust side types with Input.insertText), then click the option. The
  // listbox is the one named by aria-controls / aria-owns, else the one holding the
  // aria-activedescendant, else the only visible one in the document.

  function listboxOf(el) {
    const root = el.getRootNode();
    for (const name of ['aria-controls', 'aria-owns']) {
      for (const id of (attr(el, name) || '').split(/\s+/).filter(Boolean)) {
        const found = root.getElementById ? root.getElementById(id) : document.getElementById(id);
        if (found) return found;
      }
    }
    const inner = queryAll(el, '[role=listbox]')[0];
    if (inner) return inner;
    const active = attr(el, 'aria-activedescendant');
    const current = active && (root.getElementById ? root.getElementById(active) : null);
    if (current) return current.closest('[role=listbox]');
    const visible = queryAll(document, '[role=listbox]').filter(isVisible);
    return visible.length === 1 ? visible[0] : null;
  }

  /** The options of a combobox's listbox: [{label, value, selected, el}]. */
  function comboboxOptions(el, visibleOnly) {
    const listbox = listboxOf(el);
    if (!listbox) return [];
    return queryAll(listbox, '[role=option]')
      .filter((o) => !visibleOnly || isVisible(o))
      .filter((o) => attr(o, 'aria-disabled') !== 'true')
      .map((o) => ({
        label: collapse(native.innerText.call(o) || o.textContent),
        value: attr(o, 'data-value') || attr(o, 'value') || collapse(native.innerText.call(o) || o.textContent),
        selected: attr(o, 'aria-selected') === 'true',
        el: o,
      }));
  }

  /** What a pointer does to an element: down, up, click. */
  function press(el) {
    const opts = { bubbles: true, cancelable: true, composed: true, view: window, button: 0 };
    el.dispatchEvent(new PointerEvent('pointerdown', opts));
    el.dispatchEvent(new MouseEvent('mousedown', opts));
    el.dispatchEvent(new PointerEvent('pointerup', opts));
    el.dispatchEvent(new MouseEvent('mouseup', opts));
    el.click();
  }

  /** Opens the combobox `ref`; `{typing}` says whether it takes typed text to filter. */
  function comboOpen(ref) {
    const el = element(ref);
    if (!el || !el.isConnected) return { ok: false, error: 'the field is gone (inspect again)' };
    el.scrollIntoView({ block: 'center', inline: 'nearest' });
    el.focus();
    // A click toggles many comboboxes: only open one that is closed.
    const listbox = listboxOf(el);
    const open = attr(el, 'aria-expanded') === 'true' || (listbox && isVisible(listbox));
    if (!open) press(el);
    const typing = isTextLike(el);
    if (typing) el.select();
    return { ok: true, typing };
  }

  /** The labels of the combobox's visible options now. */
  function comboOptions(ref) {
    const el = element(ref);
    return el ? comboboxOptions(el, true).map((o) => o.label) : [];
  }

  /** Clicks the visible option matching `want`; `{ok, label}` or a failure. */
  function comboPick(ref, want) {
    const el = element(ref);
    if (!el) return failure('the field is gone (inspect again)');
    const options = comboboxOptions(el, true);
    const picked = matchOption(options, want) || options.find((o) => norm(o.label).includes(norm(want)));
    if (!picked) return noOption(want, options);
    picked.el.scrollIntoView({ block: 'nearest' });
    press(picked.el);
    return { ok: true, label: picked.label };
  }

  /** Whether the combobox now shows `label` (its input value or its own text). */
  function comboShows(ref, label) {
    const el = element(ref);
    if (!el) return false;
    leave(el);
    const shown = norm(comboboxText(el));
    return shown === norm(label) || shown.includes(norm(label));
  }

  // ---- element / focus / formIndex / submit -----------------------------------------------

  function element(ref) {
    const field = refs[ref];
    return field ? field.members[0] : null;
  }

  function focus(ref) {
    const el = element(ref);
    if (!el || !el.isConnected) return false;
    el.scrollIntoView({ block: 'center', inline: 'nearest' });
    el.focus();
    if (isTextLike(el)) {
      try {
        el.select();
      } catch (_) {
        // types without a text selection (date, color, …)
      }
    } else if (isEditingHost(el)) {
      // Select the editor's whole content, so typing replaces it.
      const selection = el.ownerDocument.getSelection();
      if (selection) selection.selectAllChildren(el);
    }
    return activeElementOf(el) === el;
  }

  function formIndex(selector) {
    let target;
    try {
      target = native.documentQuery.call(document, String(selector));
    } catch (_) {
      return null;
    }
    if (!target) return null;
    const form = target.tagName === 'FORM' ? target : isControl(target) || isSubmitter(target) ? target.form : target.closest('form');
    if (!form) return null;
    const index = scanDocument().forms.indexOf(form);
    return index < 0 ? null : index;
  }

  /** Autocomplete tokens whose values a picture must not show. */
  const SECRET_TOKENS = ['one-time-code', 'cc-number', 'cc-csc', 'cc-exp', 'cc-exp-month', 'cc-exp-year'];

  function isSecret(el) {
    if (el.tagName === 'INPUT' && String(attr(el, 'type') || '').toLowerCase() === 'password') return true;
    const tokens = String(attr(el, 'autocomplete') || '').toLowerCase().split(/\s+/);
    if (tokens.some((t) => SECRET_TOKENS.includes(t))) return true;
    const named = `${attr(el, 'name') || ''} ${attr(el, 'id') || ''}`.toLowerCase();
    return /\b(cvc|cvv|csc|otp)\b|card.?(number|no)/.test(named);
  }

  function documentBox(el) {
    const r = el.getBoundingClientRect();
    return { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height };
  }

  function shotBox(index) {
    const { forms, controls } = scanDocument();
    const form = forms[index];
    if (!form) return null;
    // The same rule as a field's `secret`: a secret control, or every box of a code.
    const secrets = buildFields(controls)
      .filter((field) => field.form === form)
      .flatMap((field) => field.members.filter((el) => isCodeBoxes(field) || isSecret(el)))
      .filter(isVisible)
      .map(documentBox)
      .filter((b) => b.width > 0 && b.height > 0);
    return { ...documentBox(form), secrets };
  }

  function submit(index) {
    const { forms, submitters } = scanDocument();
    const form = forms[index];
    if (!form) return { ok: false, method: '', error: `no form ${index} (the page has ${forms.length})` };
    // Whether the submit event fired and whether a page script cancelled it: a capturing
    // listener on the form itself runs before the page's own (non-capturing) ones, and the
    // event is read once dispatch is over, whatever the page's listeners did to it.
    let event = null;
    const watch = (e) => {
      if (e.target === form) event = e;
    };
    native.addEventListener.call(form, 'submit', watch, true);
    const verdict = () => ({
      dispatched: event !== null,
      cancelled: event !== null && native.defaultPrevented.call(event),
    });
    try {
      const button = submitters.find((b) => b.form === form && !isDisabled(b) && isVisible(b));
      if (button) {
        button.click();
        return { ok: true, method: 'button', button: submitterText(button), ...verdict() };
      }
      try {
        native.requestSubmit.call(form);
        return { ok: true, method: 'requestSubmit', ...verdict() };
      } catch (e) {
        return { ok: false, method: 'requestSubmit', error: e && e.message ? e.message : String(e) };
      }
    } finally {
      native.removeEventListener.call(form, 'submit', watch, true);
    }
  }

  globalThis.__ferryForms = Object.freeze({
    inspect,
    fill,
    element,
    focus,
    formIndex,
    shotBox,
    submit,
    comboOpen,
    comboOptions,
    comboPick,
    comboShows,
  });
  return true;
})()
