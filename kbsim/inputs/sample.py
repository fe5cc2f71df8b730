"""The sample knowledge base kbsim ships: 400 articles of a company's IT help desk.

Generated deterministically from the material in :mod:`kbsim.inputs.sample_topics` and
the tables below (no randomness: the same articles, in the same order, every time):
the topics' own articles, one setup article per app and device, one article per
common error code, and the everyday articles of each business application. Each is
rendered as a Markdown help article: what it is for or what goes wrong, numbered
steps, who to contact and what to tell them, related articles.

``kbsim serve`` serves it by default; ``corpus: {source: kbsim:sample}`` runs a day
on it; ``kbsim corpus sample DIR`` writes it out as files.

Two smaller help desks in other languages, each article with an id of its own, render
the same way from their own material: ``kbsim:sample-de`` (German,
:mod:`kbsim.inputs.sample_de`) and ``kbsim:sample-hi`` (Hindi,
:mod:`kbsim.inputs.sample_hi`); each declares its language, so a day or a server on it
searches with that language's analyzer.
"""

from __future__ import annotations

import hashlib
from functools import cache
from types import ModuleType

from kbsim.inputs.loaded import SAMPLE, LoadedCorpus
from kbsim.inputs.sample_topics import TOPICS

__all__ = ["SAMPLES", "SAMPLE_ARTICLES", "SAMPLE_DE", "SAMPLE_HI", "render", "sample_articles", "sample_corpus"]

#: ``corpus.source`` of the German and of the Hindi sample help desks.
SAMPLE_DE = "kbsim:sample-de"
SAMPLE_HI = "kbsim:sample-hi"

#: How many articles the sample holds.
SAMPLE_ARTICLES = 400

# -- one setup article per app and device ---------------------------------------------------------

#: platform -> (title words, how to install an app on it)
PLATFORMS = {
    "Windows": ("Windows", "Open Software Center from the Start menu, search for {app} and select Install"),
    "Mac": ("a Mac", "Open Self Service from the Applications folder, search for {app} and click Install"),
    "iPhone": ("iPhone or iPad", "Open the Company Portal app, find {app} under Apps and tap Install"),
    "Android": ("Android", "Open Google Play in your work profile (the apps with a briefcase badge), find {app} "
                "and tap Install"),
}

#: (what is set up, the app, what it is for, how to sign in or configure, how to check it works, platforms)
DEVICE_SETUP = (
    ("work email", "Outlook", "Work email and your calendar are in the Outlook app on every device",
     "Open Outlook and sign in with name@example.com and your network password",
     "Send yourself a test message and check that your calendar shows this week's meetings",
     ("Windows", "Mac", "iPhone", "Android")),
    ("the VPN", "the VPN client", "The VPN connects you to internal sites and shared drives from outside the office",
     "Open the VPN client, enter the portal address vpn.example.com and sign in with your network account",
     "Connect and open intranet.example.com to check that internal sites load",
     ("Windows", "Mac", "iPhone", "Android")),
    ("the authenticator app", "the authenticator app",
     "The authenticator app approves your sign-ins with a tap and shows six-digit codes when you are offline",
     "On your computer, open mfa.example.com, choose Add method and scan the QR code with the app",
     "Approve the test prompt, then sign in to any work site to see the prompt arrive", ("iPhone", "Android")),
    ("the chat app", "the chat app", "The chat app holds your team's conversations, channels and calls",
     "Open the chat app and sign in with your work account; approve the multi-factor prompt",
     "Send a message to yourself and make a test call from Settings > Devices",
     ("Windows", "Mac", "iPhone", "Android")),
    ("the cloud drive", "the cloud drive app",
     "The cloud drive keeps your files backed up and the same on every device",
     "Open the cloud drive app, sign in with your work account and choose which folders to keep on this device",
     "Check that the files show a green tick or a cloud icon", ("Windows", "Mac", "iPhone", "Android")),
    ("the password manager", "the password manager",
     "The password manager fills in passwords for work sites and shares them safely with your team",
     "Open the password manager, sign in with your work account and unlock the vault with your master password",
     "Open a saved work site and check that the password is offered", ("Windows", "Mac", "iPhone", "Android")),
    ("the softphone", "the softphone app", "The softphone app rings for calls to your office number wherever you are",
     "Open the softphone app, sign in with your work account and choose your headset under Settings > Audio",
     "Call the echo test number 9999 and check that you hear yourself", ("Windows", "Mac", "iPhone", "Android")),
    ("office Wi-Fi", "the Wi-Fi profile", "Corp-WiFi is the staff network in every office",
     "Install the Wi-Fi profile, then choose Corp-WiFi and sign in with name@example.com",
     "Open intranet.example.com without the VPN to check you are on the staff network",
     ("Windows", "Mac", "iPhone", "Android")),
    ("Office apps", "Microsoft 365 Apps", "Word, Excel and PowerPoint are licensed with your work account",
     "Open Word, choose Sign in and use name@example.com",
     "Open File > Account and check that it says Product Activated",
     ("Windows", "Mac", "iPhone", "Android")),
    ("the expenses app", "the expenses app", "The expenses app photographs receipts and files them in your next claim",
     "Open the expenses app and sign in with your work account through single sign-on",
     "Photograph a receipt and check that it appears in expenses.example.com", ("iPhone", "Android")),
)

# -- one article per common error -------------------------------------------------------------------

#: (app, code, what it means, why it happens, what to do)
ERRORS = (
    ("VPN", "691", "access denied because the user name or password is not valid",
     "The VPN gateway refused your credentials, usually because the password changed or the account is locked.",
     "Sign in at password.example.com to check your password; Unlock the account if it is locked; Type your username "
     "as name@example.com; Clear the saved password in the VPN client and type it again"),
    ("VPN", "720", "no network protocols are configured for the connection",
     "The network adapter the VPN client installs is damaged or missing, often after a Windows update.",
     "Restart the laptop; Reinstall the VPN client from Software Center; Run Windows Update and restart again; "
     "Open a ticket if the error returns"),
    ("VPN", "800", "the remote connection was not made because the VPN tunnel failed",
     "The gateway cannot be reached, because of the local network or a gateway that is down.",
     "Check that websites open without the VPN; Choose another gateway in the client; Check the service status page; "
     "Try your phone's hotspot to rule out your network"),
    ("VPN", "812", "the connection was prevented because of a policy on the server",
     "Your account is not in the group allowed to use this gateway, or your device failed the compliance check.",
     "Open the Company Portal and check your device's status; Install pending updates; Choose the gateway for your "
     "region; Ask the Network team to check your VPN group"),
    ("VPN", "868", "the remote connection was not made because the name of the server did not resolve",
     "The laptop cannot look up the gateway's address, usually because of the local network's DNS.",
     "Restart your router; Run ipconfig /flushdns in a command prompt; Try another network; Enter the gateway address "
     "exactly as vpn.example.com"),
    ("Outlook", "0x800CCC0E", "Outlook cannot connect to the server",
     "Outlook has no connection to the mail service, often because of a proxy, a firewall or a damaged profile.",
     "Check that outlook.office.com opens in the browser; Restart Outlook; Create a new mail profile from Control "
     "Panel > Mail; Repair Office from Settings > Apps"),
    ("Outlook", "0x8004010F", "the data file cannot be accessed",
     "The mail profile points to a data file that was moved or damaged.",
     "Close Outlook; Create a new mail profile from Control Panel > Mail; Set the new profile as the default; Open "
     "Outlook and let it download your mailbox again"),
    ("Outlook", "0x80040600", "an unknown error occurred while sending or receiving",
     "The local copy of your mailbox has errors.",
     "Close Outlook; Run the Inbox Repair Tool, SCANPST.EXE, on the data file; Open Outlook again; Create a new "
     "profile if the error returns"),
    ("Windows Update", "0x80070643", "an update failed to install",
     "An update, often for .NET or security definitions, could not finish, usually because something interrupted it.",
     "Restart and check for updates again; Run the Windows Update troubleshooter from Settings > System > "
     "Troubleshoot; Free up at least 10 GB of disk space; Open a ticket with the update's KB number"),
    ("Windows Update", "0x800f0922", "the update could not connect to the update service",
     "The laptop could not reach the update service, or the system reserved partition is full.",
     "Connect to the office network or the VPN; Restart and try again; Pause and resume updates; Open a ticket if the "
     "error repeats"),
    ("Windows Update", "0x80070002", "the system cannot find the file specified",
     "Files that Windows Update downloaded earlier are missing or incomplete.",
     "Restart the laptop; Run the Windows Update troubleshooter; Check for updates again so the files are downloaded "
     "afresh; Open a ticket if the same update fails twice"),
    ("Office activation", "0xC004F074", "the Key Management Service could not be contacted",
     "The laptop has not reached the licensing service for a long time.",
     "Connect to the office network or the VPN; Open any Office app and choose File > Account > Update license; "
     "Restart the app; Sign out and sign in with your work account"),
    ("Office activation", "0x803D0000", "there was a problem activating Office",
     "Office is signed in with another account, or your licence is not assigned.",
     "Sign out of all accounts in File > Account; Sign in with name@example.com; Check your licences in the IT portal; "
     "Restart the app"),
    ("Printer", "49.4C02", "the printer stopped because of a firmware error",
     "The printer received a job it could not process, often a damaged PDF.",
     "Switch the printer off for 30 seconds and on again; Delete the job from your queue at print.example.com; Print "
     "the document again after saving it as a new PDF; Report the printer if the error returns"),
    ("Printer", "13.B2", "paper jam in the duplex unit",
     "Paper is stuck in the unit that turns pages over for double-sided printing.",
     "Open the rear door shown on the display; Remove the paper carefully with both hands; Close the door firmly; "
     "Print single-sided until the printer is checked if the jam repeats"),
    ("Printer", "10.00.33", "the toner cartridge is not a supported cartridge",
     "A cartridge was replaced with one the printer does not accept.",
     "Check that the cartridge model matches the label inside the door; Take the cartridge out and put it back firmly; "
     "Report the printer so a supported cartridge can be fitted; Print on another printer meanwhile"),
    ("Cloud drive", "0x8004de40", "the app is having trouble connecting to the cloud",
     "The cloud drive app cannot reach the service, usually because of the network or a proxy setting.",
     "Check that other websites open; Restart the cloud drive app; Turn off any proxy in Settings > Network; Reset "
     "the app from its settings if the error stays"),
    ("Cloud drive", "0x8007016A", "the cloud file provider is not running",
     "Files On-Demand is turned off or the app stopped.",
     "Start the cloud drive app from the Start menu; Turn on Files On-Demand in the app's settings; Restart the "
     "laptop; Reinstall the app from Software Center"),
    ("Cloud drive", "0x80070184", "the file cannot be synced because of its name",
     "The file's name has characters or a length the cloud drive does not accept.",
     "Rename the file without characters such as \" * : < > ? / \\ |; Shorten folder names so the whole path is under "
     "400 characters; Remove spaces at the start or end of the name; Wait for sync to resume"),
    ("Chat app", "caa70004", "we couldn't sign you in",
     "The chat app's saved sign-in is out of date, for example after a password change.",
     "Quit the chat app completely; Clear its cache folder as described in the app's help; Sign in again with "
     "name@example.com; Sign in on the web to check your account works"),
    ("Chat app", "4c7", "the sign-in was blocked by a policy",
     "Your device is not compliant or not enrolled in device management.",
     "Open the Company Portal and check the device's status; Install pending updates; Set a screen lock; Sign in "
     "again once the device shows compliant"),
    ("Sign-in", "AADSTS50076", "multi-factor authentication is required",
     "The site needs a second step and no method was completed.",
     "Approve the prompt in your authenticator app; Use the six-digit code if the prompt does not arrive; Register a "
     "method at mfa.example.com if you have none; Call the Service Desk for a temporary access pass"),
    ("Sign-in", "AADSTS50053", "the account is locked",
     "Too many wrong passwords were tried, possibly by an old device still using your old password.",
     "Wait 30 minutes or unlock the account at password.example.com; Update the password on your phone and other "
     "devices; Sign in again; Report repeated lockouts to the Service Desk"),
    ("Sign-in", "AADSTS700082", "the session has expired because of inactivity",
     "You have not signed in on this device for 90 days.",
     "Sign in again with your username and password; Approve the multi-factor prompt; Keep the app signed in by "
     "using it at least once a month; Nothing was lost: your data is in the cloud"),
    ("Sign-in", "AADSTS53003", "access has been blocked by conditional access policies",
     "The device, location or app does not meet the rules for this site.",
     "Use a company laptop or an enrolled phone; Connect to the VPN if you are abroad; Use the approved app rather "
     "than the browser on a phone; Ask the Identity team which rule applies"),
    ("Browser", "ERR_CERT_DATE_INVALID", "the site's certificate has expired or the clock is wrong",
     "Either the site's certificate has really expired or your computer's date is wrong.",
     "Check your computer's date and time; Restart the browser; Report the site to its owner if the date is right; "
     "Do not bypass the warning on external sites"),
    ("Browser", "ERR_NAME_NOT_RESOLVED", "the server's address could not be found",
     "The name of the site could not be looked up: a typing error, the VPN, or a DNS problem.",
     "Check the address for typing errors; Connect to the VPN for internal sites; Run ipconfig /flushdns; Try another "
     "browser to rule out extensions"),
    ("Browser", "ERR_PROXY_CONNECTION_FAILED", "there is something wrong with the proxy server",
     "The laptop is set to use a proxy that is not reachable from the current network.",
     "Open Settings > Network & internet > Proxy; Turn on Automatically detect settings; Turn off Use a proxy server; "
     "Restart the browser"),
    ("Software Center", "0x87D00607", "content was not found",
     "The installer could not be downloaded, usually because the laptop was off the office network too long.",
     "Connect to the office network or the VPN; Restart the laptop; Wait 30 minutes and try the install again; Open a "
     "ticket with the application's name"),
    ("Software Center", "0x87D00324", "the application was not detected after installation completed",
     "The installer ran but the application did not end up where it was expected, often because an older version was "
     "in the way.",
     "Uninstall older versions of the application; Restart the laptop; Install the application again; Open a ticket "
     "if the error repeats"),
    ("BitLocker", "0x80310059", "BitLocker could not encrypt the drive",
     "The laptop's security chip (TPM) is not ready.",
     "Restart the laptop; Install firmware updates from Software Center; Do not change BIOS settings yourself; Bring "
     "the laptop to the IT walk-up desk"),
    ("Wi-Fi", "802.1X authentication failed", "the network refused the sign-in",
     "The staff network could not confirm your account or certificate.",
     "Forget Corp-WiFi and connect again; Check that your network password has not expired; Accept the certificate "
     "for radius.example.com; Check the date and time on your device"),
    ("Remote desktop", "0x204", "remote desktop cannot connect to the remote computer",
     "The office computer is off, asleep, or cannot be reached through the VPN.",
     "Check that the VPN is connected; Ask a colleague to switch on your office computer; Check the computer name; "
     "Use the full name, such as PC-12345.example.com"),
    ("Mail on phone", "0x80072EFD", "the mail app cannot reach the server",
     "The phone has no data connection or the mail service is blocked by the network.",
     "Turn off Wi-Fi to try mobile data; Turn airplane mode on and off; Remove the work account and add it again; "
     "Use the Outlook app instead of the built-in mail app"),
    ("Expenses system", "EXP-403", "you are not allowed to submit for this cost centre",
     "Your profile is not linked to the cost centre or your manager changed.",
     "Check your cost centre in your profile; Ask your manager to confirm it in the HR system; Choose the cost centre "
     "your manager approves; Ask the Business Applications team if the list is wrong"),
    ("HR system", "HR-1001", "your session has expired",
     "The HR system signs you out after 20 minutes without activity.",
     "Sign in again; Save drafts often when filling long forms; Use one browser tab for the HR system; "
     "Clear cookies if the error appears at once"),
)

# -- the everyday articles of each business application ----------------------------------------

#: (name, what it is for, address, who approves access, a first thing to do, what can be exported)
APPS = (
    ("the CRM", "tracks customers, contacts and sales opportunities", "crm.example.com", "your sales manager",
     "Open My open opportunities on the home page", "a list of accounts or opportunities"),
    ("the ticketing system", "records and routes support requests from customers", "support.example.com",
     "the Support team lead", "Open My queue to see the tickets assigned to you", "tickets for a date range"),
    ("the wiki", "holds team documentation, how-tos and meeting notes", "wiki.example.com", "the space owner",
     "Open your team's space from the sidebar", "a page or a whole space as PDF"),
    ("the e-signature service", "sends documents to be signed electronically", "sign.example.com",
     "the Legal team", "Choose New envelope and upload a document", "signed documents and their audit trail"),
    ("the procurement portal", "orders goods and services from approved suppliers", "buy.example.com",
     "your budget holder", "Search the catalogue for the item you need", "your orders and their status"),
    ("the timesheet system", "records the hours you work on each project", "time.example.com", "your project manager",
     "Open This week and enter your hours by project", "your timesheets for a month"),
    ("the payroll portal", "shows your payslips and tax documents", "payroll.example.com", "HR",
     "Open Payslips to see the latest one", "payslips and annual tax statements"),
    ("the learning platform", "offers courses and records your required training", "learn.example.com",
     "the Learning team",
     "Open My required learning", "your training record"),
    ("the visitor system", "registers visitors and prints their badges", "visitors.example.com", "the site's reception",
     "Choose New visit and enter your visitor's details", "visits for a date range"),
    ("the analytics dashboards", "show reports on sales, operations and finance", "bi.example.com",
     "the dashboard owner", "Open Shared with me to find the dashboards you can see", "a dashboard's data to Excel"),
    ("the contract database", "stores signed contracts and their renewal dates", "contracts.example.com",
     "the Legal team", "Search by supplier or customer name", "contract metadata and renewal dates"),
    ("the project planning tool", "plans projects with tasks, milestones and boards", "plan.example.com",
     "the project's owner", "Open My tasks to see what is assigned to you", "a project plan to Excel"),
    ("the document management system", "keeps controlled documents with approval and version history",
     "docs.example.com", "the document owner", "Open My documents and check those waiting for your review",
     "a document with its approval history"),
    ("the survey tool", "creates surveys and collects answers", "survey.example.com", "the Communications team",
     "Choose New survey and pick a template", "responses to Excel"),
    ("the design tool", "creates presentations, social posts and brand material", "design.example.com",
     "the Brand team", "Open Brand templates to start from an approved design", "designs as PDF or PNG"),
    ("the room booking app", "books desks and meeting rooms in every office", "rooms.example.com", "facilities",
     "Choose Book a desk and pick a floor", "your bookings to your calendar"),
    ("the code review tool", "reviews and merges changes to source code", "git.example.com",
     "the repository maintainers",
     "Open Merge requests assigned to you", "a repository as an archive"),
    ("the incident paging service", "alerts on-call engineers about outages", "pager.example.com",
     "the on-call manager",
     "Set your notification rules under My profile", "incident history for a service"),
    ("the knowledge base editor", "writes and publishes help articles like this one", "kb.example.com",
     "the Service Desk manager", "Open Drafts to see articles you have started", "articles as Markdown"),
    ("the asset inventory", "lists every laptop, phone and monitor and who has it", "assets.example.com",
     "the Service Desk", "Open My devices", "the devices assigned to your team"),
)


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _steps(text: str) -> list[str]:
    return [step.strip() for step in text.split(";") if step.strip()]


def _article(kind: str, title: str, lead: str, steps: list[str], team: str, details: str) -> tuple[str, str, list[str]]:
    """``(title, body without the related list, sections)``: a Markdown help article."""
    numbered = "\n".join(f"{n}. {step}." if not step.endswith(".") else f"{n}. {step}"
                         for n, step in enumerate(steps, start=1))
    bullets = "\n".join(f"- {step}." for step in steps)
    if kind == "how":
        body = f"{lead}\n\n## Steps\n\n{numbered}\n\n## Need help?\n\nContact {team} through the IT portal."
    elif kind == "fix":
        body = (f"## Symptoms\n\n{lead}\n\n## What to try\n\nWork through these steps in order and check after "
                f"each one whether the problem is solved.\n\n{numbered}\n\n## Still not working?\n\nOpen a ticket "
                f"with {team} and include {details}.")
    else:
        body = f"{lead}\n\n## Details\n\n{bullets}\n\n## Questions?\n\nAsk {team} through the IT portal."
    return title, body, steps


def _candidates() -> list[tuple[str, str, str]]:
    """``(topic, title, body)`` of every article the sample could hold, in order."""
    out: list[tuple[str, str, str]] = []
    for name, (team, details, lines) in TOPICS.items():
        for line in lines.strip().splitlines():
            kind, title, lead, steps_text = (part.strip() for part in line.split(" | "))
            title, body, _ = _article(kind, title, lead, _steps(steps_text), team, details)
            out.append((name, title, body))
    for thing, app, purpose, sign_in, check, platforms in DEVICE_SETUP:
        for platform in platforms:
            words, install = PLATFORMS[platform]
            steps = [install.format(app=app), sign_in, "Approve the multi-factor prompt on your phone if asked", check]
            lead = f"{purpose}. This article sets up {thing} on {words}."
            title, body, _ = _article("how", f"Set up {thing} on {words}", lead, steps, "the Service Desk", "")
            out.append((f"Setting up {thing}", title, body))
    for app, code, meaning, why, steps_text in ERRORS:
        lead = f"{app} shows error {code}: {meaning}. {why}"
        title, body, _ = _article("fix", f"{app} error {code}: {meaning}", lead, _steps(steps_text), "the Service Desk",
                                  f"the error code {code}, a screenshot and when it happened")
        out.append((f"{app} errors", title, body))
    for name, purpose, address, approver, first, exports in APPS:
        topic_name, short = _capitalised(name), name.removeprefix("the ")
        team = "the Business Applications team"
        specs = [
            ("how", f"Get started with {name}", f"{_capitalised(name)} {purpose}. It is at {address} and uses "
             "single sign-on with your work account.",
             [f"Open {address} in Chrome or Edge", "Sign in with name@example.com and approve the multi-factor "
              "prompt", first, f"Search the learning platform for {short} to find a short introduction"]),
            ("how", f"Request access to {name}", f"Access to {name} is given by role and approved by {approver}.",
             ["Open the IT portal and choose Business application access", f"Select {short} and the role you need",
              f"{_capitalised(approver)} approves the request", "Sign out and in again once you receive the "
              "confirmation email"]),
            ("fix", f"Cannot sign in to {name}", f"You see a sign-in error or a blank page when you open {address}. "
             "The usual causes are an old session, a missing role or a browser that blocks cookies.",
             ["Sign out of all example.com sites and close every browser window", f"Open {address} again in a "
              "private window to rule out an old session", "Allow cookies for example.com",
              f"Check in the IT portal that your access to {short} was approved"]),
            ("fix", f"{_capitalised(short)} is slow or does not load", f"Pages of {name} take a long time to open, or "
             "never finish loading.",
             ["Check the service status page on the IT portal for a known problem", "Disconnect the VPN: "
              f"{address} is on the internet and is faster without it", "Clear the browser cache and reload",
              "Try another browser to rule out extensions"]),
            ("how", f"Export data from {name}", f"You can export {exports} from {name} for reporting or "
             "archiving. Exports follow the same permissions as the screens you see.",
             [f"Open {address} and go to the list or page you need", "Apply filters so that only the records you "
              "need are included", "Choose Export and the file format", "Store exports with personal data in the "
              "cloud drive, never on USB drives or personal email"]),
        ]
        for kind, title, lead, steps in specs:
            title, body, _ = _article(kind, title, lead, steps, team, f"the address {address} and a screenshot")
            out.append((topic_name, title, body))
    return out


@cache
def sample_articles() -> tuple[tuple[str, str], ...]:
    """The sample's ``(title, content)`` pairs, in publication order (always the same).

    Each topic's articles are interleaved with the others' (round robin over topics), so
    that the first articles span the whole help desk, and the first
    :data:`SAMPLE_ARTICLES` are kept. Every article ends with two related articles of
    its own topic.
    """
    candidates = _candidates()
    by_topic: dict[str, list[tuple[str, str]]] = {}
    for name, title, body in candidates:
        by_topic.setdefault(name, []).append((title, body))
    ordered: list[tuple[str, str, list[str]]] = []
    queues = [list(items) for items in by_topic.values()]
    while any(queues):
        for name, queue in zip(by_topic, queues, strict=True):
            if queue:
                title, body = queue.pop(0)
                siblings = [t for t, _ in by_topic[name] if t != title]
                ordered.append((title, body, siblings))
    chosen = ordered[:SAMPLE_ARTICLES]
    titles = [title for title, _, _ in chosen]
    if len(chosen) != SAMPLE_ARTICLES or len(set(titles)) != len(titles):
        raise RuntimeError(f"the sample material gives {len(chosen)} articles, {len(set(titles))} distinct titles")
    kept = set(titles)
    articles = []
    for title, body, siblings in chosen:
        related = [t for t in siblings if t in kept][:2]
        if related:
            body += "\n\n## Related articles\n\n" + "\n".join(f"- {t}" for t in related)
        articles.append((title, body))
    return tuple(articles)


@cache
def sample_corpus() -> LoadedCorpus:
    """The sample as a :class:`~kbsim.inputs.loaded.LoadedCorpus` (no ids, no popularity)."""
    articles = sample_articles()
    digest = hashlib.sha256("\0".join(f"{t}\0{c}" for t, c in articles).encode()).hexdigest()
    return LoadedCorpus(SAMPLE, tuple(t for t, _ in articles), tuple(c for _, c in articles), None, None, digest)


# -- the samples in other languages ----------------------------------------------------------------


def render(kind: str, lead: str, steps: list[str], team: str, details: str, words: dict[str, str]) -> str:
    """An article's Markdown body in the language of ``words`` (headings and the sentences
    around the lead and steps: :data:`kbsim.inputs.sample_de.WORDS`), as :func:`_article`
    renders an English one."""
    stop = words["stop"]
    ended = [step if step.endswith((".", "!", "?", "।")) else step + stop for step in steps]
    numbered = "\n".join(f"{n}. {step}" for n, step in enumerate(ended, start=1))
    bullets = "\n".join(f"- {step}" for step in ended)
    if kind == "how":
        return f"{lead}\n\n## {words['steps']}\n\n{numbered}\n\n## {words['help']}\n\n" + words["contact"].format(
            team=team)
    if kind == "fix":
        return (f"## {words['symptoms']}\n\n{lead}\n\n## {words['try']}\n\n{words['in_order']}\n\n{numbered}\n\n"
                f"## {words['still']}\n\n" + words["ticket"].format(team=team, details=details))
    if kind == "faq":
        return f"{lead}\n\n## {words['details']}\n\n{bullets}\n\n## {words['questions']}\n\n" + words["ask"].format(
            team=team)
    raise ValueError(f"kind must be how, fix or faq, got {kind!r}")


def _localised(topics: dict[str, tuple[str, str, str]], words: dict[str, str]) -> list[tuple[str, str, str]]:
    """``(id, title, body)`` of a sample's articles: topic by topic, round robin (the first
    articles span the help desk), each ending with two related articles of its topic."""
    by_topic: dict[str, list[tuple[str, str, str]]] = {}
    for name, (team, details, lines) in topics.items():
        for line in lines.strip().splitlines():
            article_id, kind, title, lead, steps = (part.strip() for part in line.split(" | "))
            by_topic.setdefault(name, []).append((article_id, title, render(kind, lead, _steps(steps), team, details,
                                                                            words)))
    ordered = []
    queues = [list(items) for items in by_topic.values()]
    while any(queues):
        for name, queue in zip(by_topic, queues, strict=True):
            if queue:
                article_id, title, body = queue.pop(0)
                related = [t for _, t, _ in by_topic[name] if t != title][:2]
                if related:
                    body += f"\n\n## {words['related']}\n\n" + "\n".join(f"- {t}" for t in related)
                ordered.append((article_id, title, body))
    ids, titles = [a for a, _, _ in ordered], [t for _, t, _ in ordered]
    if len(set(ids)) != len(ids) or len(set(titles)) != len(titles):
        raise RuntimeError("a sample's ids and titles must all differ")
    return ordered


@cache
def _language_sample(source: str) -> LoadedCorpus:
    material: ModuleType
    if source == SAMPLE_DE:
        from kbsim.inputs import sample_de

        material, language = sample_de, "de"
    else:
        from kbsim.inputs import sample_hi

        material, language = sample_hi, "hi"
    articles = _localised(material.TOPICS, material.WORDS)
    digest = hashlib.sha256("\0".join(f"{i}\0{t}\0{c}" for i, t, c in articles).encode()).hexdigest()
    return LoadedCorpus(source, tuple(t for _, t, _ in articles), tuple(c for _, _, c in articles),
                        tuple(i for i, _, _ in articles), None, digest, language)


#: Every shipped sample's ``corpus.source``.
SAMPLES = (SAMPLE, SAMPLE_DE, SAMPLE_HI)


def sample(source: str) -> LoadedCorpus:
    """The shipped sample ``source`` names (one of :data:`SAMPLES`)."""
    if source == SAMPLE:
        return sample_corpus()
    if source in (SAMPLE_DE, SAMPLE_HI):
        return _language_sample(source)
    raise ValueError(f"no sample {source!r}; the samples are {', '.join(SAMPLES)}")
