"""The facts a synthetic grant report states once and refers back to later.

Each kind has a question with exactly one answer in a document, sentences that introduce the answer,
and sentences that refer back to it verbatim. Introductions never mention another fact's value, so a
fact's answer first appears in the section that introduces it. Values are drawn from a
`random.Random` only, and redrawn until no answer contains another (a count "1,284" must not hide
inside an amount "$1,284,300"), so that "is the answer in this text" has one meaning.
"""

from __future__ import annotations

import datetime
import random
import string
from dataclasses import dataclass

from harness.data.workload import words as v


@dataclass(frozen=True)
class FactKind:
    key: str
    question: str  # may name the document's instrument, samples or units: {instrument} {samples} {units}
    intros: tuple[str, ...]
    references: tuple[str, ...]


KINDS = (
    FactKind("grant_number", "What is the grant number of the award?",
             ("The award is registered with the funding agency as grant {value}.",
              "All activities described here are funded under grant {value}, awarded through the agency's "
              "open research programme.",
              "For reference, the agency's grant number for this award is {value}."),
             ("The equipment purchased under {value} remained in service throughout {period}.",
              "All costs in this section were charged to grant {value}.",
              "As required by the terms of grant {value}, the team filed its interim statement on time.",
              "Publications from this period acknowledge grant {value}.")),
    FactKind("principal_investigator", "Who is the principal investigator of the grant?",
             ("The principal investigator, Dr. {value}, leads the project and chairs the steering group.",
              "Dr. {value} serves as principal investigator and holds overall responsibility for the award.",
              "Overall scientific direction rests with the principal investigator, Dr. {value}."),
             ("Dr. {value} reviewed the plans for {milestone} with the team.",
              "As principal investigator, Dr. {value} approved the changes described here.",
              "Dr. {value} presented the work on {topic} to {audience}.")),
    FactKind("co_investigator_collection", "Which co-investigator leads data collection?",
             ("Data collection is led by co-investigator Dr. {value}.",
              "Dr. {value}, a co-investigator, is responsible for all data collection."),
             ("Dr. {value} supervised data collection during {period}.",
              "The data collection team under Dr. {value} completed {milestone}.")),
    FactKind("co_investigator_analysis", "Which co-investigator leads the statistical analysis?",
             ("The statistical analysis is led by co-investigator Dr. {value}.",
              "Co-investigator Dr. {value} is in charge of the statistical analysis."),
             ("Dr. {value} checked the statistical analysis of {topic}.",
              "The analysis plan prepared by Dr. {value} was followed without deviation.")),
    FactKind("program_officer", "Who is the program officer for the grant at the funding agency?",
             ("At the funding agency, the award is overseen by program officer {value}.",
              "Our program officer at the agency, {value}, approved the reporting schedule."),
             ("The change was discussed with {value}, the program officer, before it took effect.",
              "A copy of this section was sent to the program officer, {value}.")),
    FactKind("total_award", "What is the total amount awarded by the grant?",
             ("The total award is {value}, spread over the full project period.",
              "The agency awarded a total of {value} for the project."),
             ("Spending to date remains within the total award of {value}.",
              "Against the total award of {value}, the spending in {period} was on plan.")),
    FactKind("equipment_cost", "How much did the {instrument} cost?",
             ("The {instrument} was purchased for {value}, including installation.",
              "A new {instrument} was bought for {value} after a competitive tender."),
             ("The {instrument}, bought for {value}, was used for the work on {topic}.",
              "The {value} spent on the {instrument} has already paid off in faster measurements.")),
    FactKind("equipment_serial", "What is the serial number of the {instrument}?",
             ("The {instrument} carries serial number {value} in the asset register.",
              "In the asset register, the {instrument} is listed under serial number {value}."),
             ("Instrument {value}, the {instrument}, was recalibrated during {period}.",
              "All measurements on {topic} used the {instrument} with serial number {value}.")),
    FactKind("protocol_number", "What is the ethics protocol number of the study?",
             ("The study was approved by the ethics committee under protocol {value}.",
              "Ethical approval was granted under protocol number {value}."),
             ("The amendment to protocol {value} was approved without conditions.",
              "All procedures remain within protocol {value}.")),
    FactKind("start_date", "On what date did the project start?",
             ("The project formally started on {value}.",
              "Work began on {value}, the official start date of the award."),
             ("Since the start on {value}, the team has completed {milestone}.",
              "Counting from the start date of {value}, the project is on schedule.")),
    FactKind("review_date", "On what date is the mid-term review with the agency?",
             ("The mid-term review with the agency is scheduled for {value}.",
              "The agency set the date of the mid-term review as {value}."),
             ("Preparations for the mid-term review on {value} are under way.",
              "The material for the review on {value} includes this section.")),
    FactKind("samples_count", "How many {samples} were collected in the first campaign?",
             ("In the first campaign the team collected {value} {samples}.",
              "A total of {value} {samples} were collected during the first campaign."),
             ("The {value} {samples} from the first campaign have all been processed.",
              "Analyses of the {value} {samples} continued during {period}.")),
    FactKind("units_count", "How many {units} does the study include?",
             ("The study includes {value} {units} across all sites.",
              "Enrolment closed with {value} {units} in the study."),
             ("Data from all {value} {units} were checked for completeness.",
              "Follow-up of the {value} {units} continued as planned.")),
    FactKind("field_site", "What is the name of the main field site?",
             ("Most of the field work takes place at {value}, the project's main field site.",
              "The main field site is {value}, where the team keeps a permanent base."),
             ("Staff at {value} supported the work during {period}.",
              "The instruments at {value} ran without interruption.")),
    FactKind("partner_institution", "Which institution is the project's main academic partner?",
             ("The main academic partner is {value}, which hosts part of the team.",
              "The project's main academic partner, {value}, contributes laboratory space."),
             ("Colleagues at {value} contributed to {output}.",
              "A joint seminar with {value} discussed {topic}.")),
)

_PEOPLE = ("principal_investigator", "co_investigator_collection", "co_investigator_analysis", "program_officer")
_LETTERS = "".join(c for c in string.ascii_uppercase if c not in "IO")  # never misread as 1 and 0


def _money(rng: random.Random, low: int, high: int, step: int) -> str:
    return f"${rng.randrange(low, high, step):,}"


def _date(day: datetime.date) -> str:
    return f"{day.day} {v.MONTHS[day.month - 1]} {day.year}"


def _draw(rng: random.Random) -> dict[str, str]:
    """One candidate value per kind; people are drawn together so no two share a first or last name."""
    firsts = rng.sample(v.FIRST_NAMES, len(_PEOPLE))
    lasts = rng.sample(v.SURNAMES, len(_PEOPLE))
    values = {key: f"{first} {last}" for key, first, last in zip(_PEOPLE, firsts, lasts, strict=True)}
    letters = rng.choice(_LETTERS) + rng.choice(_LETTERS)
    serial_letters = rng.choice(_LETTERS) + rng.choice(_LETTERS)
    start = datetime.date(2024, 1, 1) + datetime.timedelta(days=rng.randrange(8 * 365))
    values.update(
        grant_number=f"GR-{rng.randint(1000, 9999)}-{letters}{rng.randint(1, 9)}",
        total_award=_money(rng, 400_000, 4_900_000, 100),
        equipment_cost=_money(rng, 35_000, 480_000, 50),
        equipment_serial=f"{serial_letters}{rng.randint(10, 99)}-{rng.randint(10000, 99999)}",
        protocol_number=f"{rng.choice(v.PROTOCOL_PREFIXES)}-{start.year}-{rng.randint(1, 9999):04d}",
        start_date=_date(start),
        review_date=_date(start + datetime.timedelta(days=rng.randint(270, 600))),
        samples_count=f"{rng.randint(1_000, 9_999):,}",
        units_count=f"{rng.randint(1_000, 4_999):,}",
        field_site=f"{rng.choice(v.PLACE_WORDS)} {rng.choice(v.PLACE_FEATURES)} {rng.choice(v.SITE_KINDS)}",
        partner_institution=rng.choice(v.INSTITUTION_FORMS).format(
            town=rng.choice(v.PLACE_WORDS) + rng.choice(v.TOWN_ENDINGS)),
    )
    return values


def _nested(values: dict[str, str]) -> bool:
    answers = list(values.values())
    return any(a in b for i, a in enumerate(answers) for j, b in enumerate(answers) if i != j)


def draw_values(rng: random.Random, used: set[str]) -> dict[str, str]:
    """Fact values for one document: none nested in another, and (best effort, up to 200 draws) none
    already used by an earlier document of the same corpus, which `used` records."""
    fallback: dict[str, str] | None = None
    for _ in range(200):
        values = _draw(rng)
        if _nested(values):
            continue
        fallback = fallback or values
        if used.isdisjoint(values.values()):
            break
    else:
        if fallback is None:
            raise RuntimeError("could not draw distinct fact values")  # unreachable in practice
        values = fallback
    used.update(values.values())
    return {kind.key: values[kind.key] for kind in KINDS}  # fixed order, whatever _draw's order
