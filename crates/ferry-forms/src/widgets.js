// ferry-forms widget adapters. Unlike inspect.js this runs in the PAGE's own world
// (Runtime.callFunctionOn, `this` bound to the control), because a date picker keeps its
// date in page JavaScript and only its own API sets it. The arguments are JSON values;
// nothing from the page is evaluated. The page can see and answer this call, so the agent
// trusts only what it reads back afterwards in its isolated world.
//
// (widget, dates): widget is what inspect.js's datePickerOf named; dates are
// [{year, month, day, hour?, minute?}] (one, or two for a range). -> {ok, error?}
function (widget, dates) {
  const values = dates.map((d) => new Date(d.year, d.month - 1, d.day, d.hour || 0, d.minute || 0));
  if (widget === 'flatpickr') {
    // With altInput the visible input is a copy; the instance sits on the original before it.
    const previous = this.previousElementSibling;
    const picker = this._flatpickr || (previous && previous._flatpickr);
    if (!picker || typeof picker.setDate !== 'function') {
      return { ok: false, error: 'the flatpickr calendar of this field is not reachable' };
    }
    picker.setDate(values.length === 1 ? values[0] : values, true);
    return { ok: true };
  }
  if (widget === 'jquery-ui-datepicker') {
    const $ = window.jQuery;
    if (!$ || !$.fn || typeof $.fn.datepicker !== 'function') {
      return { ok: false, error: 'the jQuery UI datepicker of this field is not reachable' };
    }
    if (values.length !== 1) return { ok: false, error: 'this date picker takes one date' };
    $(this).datepicker('setDate', values[0]);
    $(this).trigger('change');
    return { ok: true };
  }
  return { ok: false, error: `no way to set a ${widget}` };
}
