"""Native tests of date_info's logic: the function, called as a call would."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "sdk-guest", "python")]

import main  # noqa: E402
import wasmcp  # noqa: E402


class DateInfo(unittest.TestCase):
    def test_facts(self):
        self.assertEqual(main.date_info("2021-01-01", other="2020-12-25"), {
            "date": "2021-01-01", "weekday": "Friday", "isoYear": 2020, "isoWeek": 53, "dayOfYear": 1,
            "leapYear": False, "daysInMonth": 31, "daysUntilOther": -7})
        self.assertNotIn("daysUntilOther", main.date_info("2024-02-29"))
        self.assertEqual(main.date_info("2000-02-01")["daysInMonth"], 29)
        self.assertEqual(main.date_info("1900-02-01")["daysInMonth"], 28)

    def test_dates_python_does_not_have(self):
        for args in ({"date": "0000-01-01"}, {"date": "2024-01-01", "other": "0000-12-31"}):
            with self.assertRaises(wasmcp.ToolError):
                main.date_info(**args)

    def test_registered_under_its_manifest_name(self):
        self.assertIs(wasmcp._tools["date_info"], main.date_info)


if __name__ == "__main__":
    unittest.main()
