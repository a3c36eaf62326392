"""date_info: facts about a calendar date, and the distance to another one.

The Python example (sdk-guest/python): an ordinary function marked
@wasmcp.tool, the standard library's datetime and calendar, a ToolError for
what the schema cannot rule out, and a log message."""

import calendar
import datetime

import wasmcp


def parse(field, value):
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        raise wasmcp.ToolError("%s %r is not a date from 0001-01-01 to 9999-12-31 in YYYY-MM-DD form" % (field, value))


@wasmcp.tool(name="date_info")
def date_info(date, other=None):
    d = parse("date", date)
    year, week, _ = d.isocalendar()
    info = {
        "date": d.isoformat(),
        "weekday": calendar.day_name[d.weekday()],
        "isoYear": year,
        "isoWeek": week,
        "dayOfYear": d.timetuple().tm_yday,
        "leapYear": calendar.isleap(d.year),
        "daysInMonth": calendar.monthrange(d.year, d.month)[1],
    }
    if other is not None:
        info["daysUntilOther"] = (parse("other", other) - d).days
    wasmcp.log("%s is a %s" % (info["date"], info["weekday"]), level="debug")
    return info
