"""An independent checker of the Parallel Workloads Archive's Standard Workload Format,
version 2.2 (https://www.cs.huji.ac.il/labs/parallel/workload/swf.html), written from the
format's definition, not from schedlab's reader, so that it can disagree with it.

What it checks:

- a job line has 18 whitespace-separated numbers; the counts, numbers and codes (job number,
  processors, status, user, group, executable, queue, partition, preceding job) are integers,
  times and memory may be fractional; a value is >= 0 or -1 ("unknown"), never another
  negative number;
- job numbers are >= 1 and unique (the format numbers jobs from 1; a cleaned log keeps its
  numbers, so gaps are allowed) when ``Preemption`` is not ``Yes``/``Double``;
- lines are sorted by submit time; status is -1, 0 (failed), 1 (completed), 5 (cancelled), or
  2-4 (the parts of a job split by checkpointing or swapping);
- the header comes first: every ``;`` line precedes the first job line; a ``; Label: value``
  line whose label is one word names one of the format's labels; ``Version`` is 2, 2.1 or
  2.2; the integer labels (``MaxJobs``, ``MaxProcs``, ``UnixStartTime``, ...) hold an integer
  (optionally followed by words in parentheses); ``MaxJobs`` is the number of distinct job
  numbers and ``MaxRecords`` the number of job lines; no job has more processors than
  ``MaxProcs`` (or ``MaxNodes`` without it).
"""

from __future__ import annotations

import gzip
import itertools
import re
from pathlib import Path

#: The labels of the format's header comments (version 2.2).
LABELS = frozenset(
    {
        "Version", "Computer", "Installation", "Acknowledge", "Information", "Conversion",
        "MaxJobs", "MaxRecords", "Preemption", "UnixStartTime", "TimeZone", "TimeZoneString",
        "StartTime", "EndTime", "MaxNodes", "MaxProcs", "MaxRuntime", "MaxMemory",
        "AllowOveruse", "MaxQueues", "Queues", "Queue", "MaxPartitions", "Partitions",
        "Partition", "Note",
    }
)  # fmt: skip
INTEGER_LABELS = frozenset(
    {
        "MaxJobs", "MaxRecords", "MaxNodes", "MaxProcs", "MaxRuntime", "MaxMemory",
        "MaxQueues", "MaxPartitions", "UnixStartTime", "TimeZone",
    }
)  # fmt: skip
#: 0-based indices of the fields that must be integers (1-based: 1, 5, 8, 11-17).
INTEGER_FIELDS = frozenset({0, 4, 7, 10, 11, 12, 13, 14, 15, 16})
STATUSES = frozenset({-1, 0, 1, 2, 3, 4, 5})
_LABEL_LINE = re.compile(r"^;\s*([A-Za-z]+)\s*:(.*)$")
_INTEGER_VALUE = re.compile(r"^\s*(\d+)\s*(\(.*\))?\s*$")


def pwa_swf_problems(path: str | Path) -> list[str]:
    """Every way ``path`` (plain or gzipped) departs from SWF 2.2; empty when it is valid."""
    data = Path(path).read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    problems: list[str] = []
    header: dict[str, str] = {}
    jobs: list[list[float]] = []
    first_job_line = None
    for number, line in enumerate(data.decode("ascii").splitlines(), start=1):
        text = line.strip()
        if not text:
            continue
        if text.startswith(";"):
            if first_job_line is not None:
                problems.append(f"line {number}: a comment after the first job line")
            match = _LABEL_LINE.match(text)
            if match is not None and not match.group(2).startswith("//"):
                label, value = match.group(1), match.group(2).strip()
                if label not in LABELS:
                    problems.append(f"line {number}: unknown header label {label}")
                header.setdefault(label, value)
            continue
        first_job_line = first_job_line or number
        fields = text.split()
        if len(fields) != 18:
            problems.append(f"line {number}: {len(fields)} fields, not 18")
            continue
        try:
            values = [float(field) for field in fields]
        except ValueError:
            problems.append(f"line {number}: a field is not a number")
            continue
        for index, value in enumerate(values):
            if index in INTEGER_FIELDS and value != int(value):
                problems.append(f"line {number}: field {index + 1} is not an integer")
            if value < 0 and value != -1:
                problems.append(f"line {number}: field {index + 1} is {value:g}, not >= 0 or -1")
        if values[0] < 1:
            problems.append(f"line {number}: job number {values[0]:g} < 1")
        if values[10] not in STATUSES:
            problems.append(f"line {number}: status {values[10]:g} is no SWF status")
        jobs.append(values)
    if not jobs:
        return [*problems, "no job line"]
    submits = [job[1] for job in jobs]
    if any(later < earlier for earlier, later in itertools.pairwise(submits)):
        problems.append("job lines are not sorted by submit time")
    numbers = [job[0] for job in jobs]
    if header.get("Preemption", "No") not in ("Yes", "Double") and len(set(numbers)) < len(jobs):
        problems.append("a job number repeats (Preemption is not Yes or Double)")
    if "Version" in header and header["Version"] not in ("2", "2.0", "2.1", "2.2"):
        problems.append(f"Version {header['Version']} is not 2, 2.1 or 2.2")
    integers: dict[str, int] = {}
    for label in INTEGER_LABELS & header.keys():
        match = _INTEGER_VALUE.match(header[label])
        if match is None and label != "TimeZone":
            problems.append(f"{label}: {header[label]!r} is not an integer")
        elif match is not None:
            integers[label] = int(match.group(1))
    expected = {"MaxJobs": len(set(numbers)), "MaxRecords": len(jobs)}
    for label, count in expected.items():
        if label in integers and integers[label] != count:
            problems.append(f"{label} is {integers[label]}, but the file holds {count}")
    size = integers.get("MaxProcs", integers.get("MaxNodes"))
    if size is not None and max(max(job[4], job[7]) for job in jobs) > size:
        problems.append(f"a job has more processors than the machine's {size}")
    return problems
