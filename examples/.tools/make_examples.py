"""Regenerates the binary sample documents of the corpus, byte for byte:

    .venv/bin/python examples/.tools/make_examples.py

- examples/manuals/regions-and-edge-locations.pdf (reportlab, BSD): a region catalog whose edge
  location table runs over several pages with its header repeated, and a running footer;
- examples/contracts/professional-services-addendum.docx (python-docx, MIT): a contract with
  heading styles, numbered clauses, a hand-formatted bold clause heading, a rate table and lists.

Output is reproducible: reportlab runs in invariant mode (fixed dates and ids) and the DOCX is
re-zipped with fixed timestamps and fixed core properties. This folder is hidden (".tools") so that
ingesting examples/ does not try to ingest the script itself.
"""

import datetime
import io
import zipfile
from pathlib import Path

import docx
from docx.shared import Pt
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

EXAMPLES = Path(__file__).resolve().parent.parent
FIXED_TIME = datetime.datetime(2026, 1, 15, 9, 0, 0)

REGIONS = [
    ("Region", "Location", "Replicates to", "Certifications"),
    ("us-east", "Ashburn, Virginia, U.S.", "us-west", "SOC 2, ISO 27001, HIPAA"),
    ("us-west", "Hillsboro, Oregon, U.S.", "us-east", "SOC 2, ISO 27001"),
    ("eu-central", "Frankfurt, Germany", "Dublin, Ireland", "SOC 2, ISO 27001, C5"),
    ("ap-south", "Mumbai, India", "Chennai, India", "SOC 2, ISO 27001"),
    ("ap-northeast", "Tokyo, Japan", "Osaka, Japan", "SOC 2, ISO 27001, ISMAP"),
]

EDGE_LOCATIONS = [
    ("ams1", "Amsterdam", "Netherlands", "eu-central", "2021"),
    ("atl1", "Atlanta", "United States", "us-east", "2020"),
    ("bcn1", "Barcelona", "Spain", "eu-central", "2023"),
    ("bkk1", "Bangkok", "Thailand", "ap-south", "2024"),
    ("bog1", "Bogotá", "Colombia", "us-east", "2024"),
    ("bom1", "Mumbai", "India", "ap-south", "2025"),
    ("bos1", "Boston", "United States", "us-east", "2020"),
    ("cdg1", "Paris", "France", "eu-central", "2021"),
    ("cgk1", "Jakarta", "Indonesia", "ap-south", "2024"),
    ("chi1", "Chicago", "United States", "us-east", "2019"),
    ("cph1", "Copenhagen", "Denmark", "eu-central", "2022"),
    ("cpt1", "Cape Town", "South Africa", "eu-central", "2024"),
    ("del1", "New Delhi", "India", "ap-south", "2025"),
    ("den1", "Denver", "United States", "us-west", "2020"),
    ("dfw1", "Dallas", "United States", "us-east", "2019"),
    ("dub1", "Dublin", "Ireland", "eu-central", "2021"),
    ("dxb1", "Dubai", "United Arab Emirates", "ap-south", "2023"),
    ("eze1", "Buenos Aires", "Argentina", "us-east", "2024"),
    ("fra1", "Frankfurt", "Germany", "eu-central", "2021"),
    ("gru1", "São Paulo", "Brazil", "us-east", "2022"),
    ("hel1", "Helsinki", "Finland", "eu-central", "2023"),
    ("hkg1", "Hong Kong", "China", "ap-northeast", "2022"),
    ("icn1", "Seoul", "South Korea", "ap-northeast", "2022"),
    ("jnb1", "Johannesburg", "South Africa", "eu-central", "2024"),
    ("kix1", "Osaka", "Japan", "ap-northeast", "2023"),
    ("lax1", "Los Angeles", "United States", "us-west", "2019"),
    ("lhr1", "London", "United Kingdom", "eu-central", "2020"),
    ("lim1", "Lima", "Peru", "us-east", "2025"),
    ("lis1", "Lisbon", "Portugal", "eu-central", "2023"),
    ("maa1", "Chennai", "India", "ap-south", "2025"),
    ("mad1", "Madrid", "Spain", "eu-central", "2022"),
    ("mel1", "Melbourne", "Australia", "ap-northeast", "2023"),
    ("mex1", "Mexico City", "Mexico", "us-west", "2022"),
    ("mia1", "Miami", "United States", "us-east", "2020"),
    ("mil1", "Milan", "Italy", "eu-central", "2022"),
    ("mnl1", "Manila", "Philippines", "ap-northeast", "2024"),
    ("mrs1", "Marseille", "France", "eu-central", "2024"),
    ("nrt1", "Tokyo", "Japan", "ap-northeast", "2021"),
    ("osl1", "Oslo", "Norway", "eu-central", "2023"),
    ("phx1", "Phoenix", "United States", "us-west", "2021"),
    ("prg1", "Prague", "Czech Republic", "eu-central", "2024"),
    ("scl1", "Santiago", "Chile", "us-east", "2024"),
    ("sea1", "Seattle", "United States", "us-west", "2019"),
    ("sin1", "Singapore", "Singapore", "ap-south", "2021"),
    ("sjc1", "San Jose", "United States", "us-west", "2019"),
    ("sto1", "Stockholm", "Sweden", "eu-central", "2022"),
    ("syd1", "Sydney", "Australia", "ap-northeast", "2021"),
    ("tlv1", "Tel Aviv", "Israel", "eu-central", "2024"),
    ("tpe1", "Taipei", "Taiwan", "ap-northeast", "2023"),
    ("vie1", "Vienna", "Austria", "eu-central", "2023"),
    ("waw1", "Warsaw", "Poland", "eu-central", "2022"),
    ("yul1", "Montréal", "Canada", "us-east", "2021"),
    ("yvr1", "Vancouver", "Canada", "us-west", "2021"),
    ("yyz1", "Toronto", "Canada", "us-east", "2020"),
    ("zrh1", "Zurich", "Switzerland", "eu-central", "2022"),
]


def regions_pdf() -> bytes:
    styles = getSampleStyleSheet()
    body, h1, h2 = styles["BodyText"], styles["Title"], styles["Heading2"]
    grid = TableStyle([
        ("FONT", (0, 0), (-1, 0), "Helvetica-Bold"),
        ("GRID", (0, 0), (-1, -1), 0.5, colors.grey),
        ("BACKGROUND", (0, 0), (-1, 0), colors.lightgrey),
    ])

    def footer(canvas, doc):
        canvas.saveState()
        canvas.setFont("Helvetica", 8)
        canvas.drawString(72, 30, f"Northwind Cloud - Regions and Edge Locations - Page {doc.page}")
        canvas.restoreState()

    story = [
        Paragraph("Regions and Edge Locations", h1),
        Paragraph("This catalog lists the regions where Northwind Cloud stores Customer Data and the edge "
                  "locations that accelerate downloads. Customer Data is stored only in the region chosen at "
                  "workspace creation; edge locations cache shared files for up to 24 hours and never hold the "
                  "primary copy.", body),
        Paragraph("1. Regions", h2),
        Table([list(r) for r in REGIONS], repeatRows=1, style=grid),
        Spacer(1, 6),
        Paragraph("A workspace's region cannot be changed after creation. To move data to another region, "
                  "export it with nwctl and import it into a new workspace.", body),
        Paragraph("2. Edge locations", h2),
        Paragraph("Edge locations terminate TLS close to the user and cache downloads of shared files. Uploads "
                  "always go directly to the origin region listed for the edge location.", body),
        Table([["Code", "City", "Country", "Origin region", "Opened"], *map(list, EDGE_LOCATIONS)],
              repeatRows=1, style=grid),
        Paragraph("3. Routing and failover", h2),
        Paragraph("3.1 Requests are routed to the nearest healthy edge location by anycast DNS.", body),
        Paragraph("3.2 If an edge location is unavailable, traffic fails over to the next closest location "
                  "within 30 seconds.", body),
        Paragraph("3.3 Edge caches are purged within 5 minutes when a shared file is deleted or its share link "
                  "is revoked.", body),
    ]
    out = io.BytesIO()
    doc = SimpleDocTemplate(out, pagesize=A4, invariant=1, title="Regions and Edge Locations",
                            author="Northwind Cloud", subject="Region catalog", creator="make_examples.py")
    doc.build(story, onFirstPage=footer, onLaterPages=footer)
    return out.getvalue()


def _clause(document, text: str, bold: bool = False) -> None:
    paragraph = document.add_paragraph()
    run = paragraph.add_run(text)
    run.bold = bold or None


def contract_docx() -> bytes:
    document = docx.Document()
    document.styles["Normal"].font.size = Pt(11)
    document.add_heading("Professional Services Addendum", level=0)
    document.add_paragraph(
        'This Professional Services Addendum ("Addendum") supplements the Master Services Agreement between '
        'Northwind Cloud, Inc. ("Northwind") and Customer and applies to onboarding, migration and training '
        'services ordered in a Statement of Work ("SOW").')
    document.add_heading("1. Statements of Work", level=1)
    _clause(document, "1.1 Each SOW describes the services, deliverables, schedule and fees. An SOW is binding once "
                      "signed by both parties.")
    _clause(document, "1.2 If an SOW conflicts with this Addendum, the SOW prevails for that engagement only.")
    document.add_heading("2. Rates and Invoicing", level=1)
    _clause(document, "2.1 Services are billed on a time-and-materials basis at the rates below unless the SOW sets "
                      "a fixed fee.")
    rates = [("Role", "Hourly rate", "Minimum booking"), ("Solutions Architect", "$275", "8 hours"),
             ("Migration Engineer", "$225", "16 hours"), ("Trainer", "$180", "4 hours"),
             ("Project Manager", "$160", "8 hours")]
    table = document.add_table(rows=0, cols=3)
    table.style = "Table Grid"
    for row in rates:
        cells = table.add_row().cells
        for cell, value in zip(cells, row, strict=True):
            cell.text = value
    _clause(document, "2.2 Northwind invoices time-and-materials services monthly in arrears. Fixed-fee SOWs are "
                      "invoiced 50% on signature and 50% on acceptance.")
    _clause(document, "2.3 Pre-approved travel expenses are billed at cost and may not exceed 10% of the SOW fees "
                      "without Customer's written consent.")
    document.add_heading("3. Change Requests", level=1)
    _clause(document, "3.1 Either party may request a change to an SOW in writing. Northwind will reply within 5 "
                      "business days with the impact on schedule and fees.")
    _clause(document, "3.2 No change is binding until both parties sign a change order.")
    document.add_heading("4. Acceptance", level=1)
    _clause(document, "4.1 Customer has 10 business days after delivery to test each deliverable against the "
                      "acceptance criteria in the SOW.")
    _clause(document, "4.2 A deliverable is deemed accepted if Customer does not report a material nonconformity "
                      "in writing within that period.")
    _clause(document, "4.3 Northwind will correct reported nonconformities and resubmit the deliverable within 10 "
                      "business days.")
    document.add_heading("5. Personnel", level=1)
    _clause(document, "5.1 Northwind personnel working on site will follow Customer's reasonable security and "
                      "safety rules.")
    _clause(document, "5.2 Customer may request the replacement of any Northwind consultant for a documented reason; "
                      "Northwind will propose a replacement within 10 business days.")
    _clause(document, "5.3 Every Northwind consultant assigned to an SOW has:")
    for item in ("a background check completed within the last 24 months;",
                 "the Northwind Cloud Certified Administrator certification;",
                 "a signed confidentiality undertaking."):
        document.add_paragraph(item, style="List Bullet")
    document.add_heading("6. Warranty", level=1)
    _clause(document, "6.1 Northwind warrants that the services will be performed in a professional manner "
                      "consistent with industry standards.")
    _clause(document, "6.2 Customer must report a breach of this warranty within 30 days after the services are "
                      "performed; Northwind's only obligation is to re-perform the nonconforming services at no "
                      "charge.")
    document.add_heading("7. Intellectual Property", level=1)
    _clause(document, "7.1 Customer owns the deliverables created specifically for Customer under an SOW, once paid "
                      "in full.")
    _clause(document, "7.2 Northwind retains ownership of its pre-existing tools, scripts and templates, and grants "
                      "Customer a perpetual, non-exclusive licence to use them as part of the deliverables.")
    # Clause titles formatted by hand (bold body text, no heading style) are common in contracts.
    _clause(document, "8. Non-Solicitation", bold=True)
    _clause(document, "8.1 During an SOW and for 12 months after it ends, neither party will solicit for employment "
                      "any employee of the other party who worked on that SOW, except through general job "
                      "advertisements.")
    document.add_heading("Schedule A: Onboarding Package", level=1)
    document.add_paragraph("The Onboarding Package (10 hours, $1,500 one-time) on the price list includes:")
    for item in ("Workspace configuration review", "SSO and SCIM setup",
                 "A data migration plan for up to 5 TB", "Two 90-minute administrator training sessions"):
        document.add_paragraph(item, style="List Number")
    document.add_paragraph("Unused hours expire 6 months after the SOW is signed.")

    props = document.core_properties
    props.title, props.author, props.last_modified_by = "Professional Services Addendum", "Northwind Cloud", ""
    props.created = props.modified = props.last_printed = FIXED_TIME
    props.revision = 1
    raw = io.BytesIO()
    document.save(raw)
    return _fixed_zip(raw.getvalue())


def _fixed_zip(data: bytes) -> bytes:
    """The same archive with every entry stamped with one fixed time, so the bytes are reproducible."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=FIXED_TIME.timetuple()[:6])
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()


def main() -> None:
    outputs = {
        EXAMPLES / "manuals" / "regions-and-edge-locations.pdf": regions_pdf(),
        EXAMPLES / "contracts" / "professional-services-addendum.docx": contract_docx(),
    }
    for path, data in outputs.items():
        path.write_bytes(data)
        print(f"wrote {path.relative_to(EXAMPLES.parent)} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
