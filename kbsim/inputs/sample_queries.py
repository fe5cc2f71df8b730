# ruff: noqa: E501 (one query a line: the text is data)
"""Labelled queries for the shipped samples: what a person types, and the article or
articles that answer it (by title).

Written as people ask, in their own words rather than the titles' (``my laptop is
slow``, ``forgot my password``), at least 50 a sample. :mod:`kbsim.report.search_quality`
measures recall@2 (the agent cites the top two hits) and the mean reciprocal rank on
them, per sample and analyzer setting; ``tests/test_search_quality.py`` holds a floor.
"""

from __future__ import annotations

from kbsim.inputs.corpus import SAMPLE
from kbsim.inputs.sample import SAMPLE_DE, SAMPLE_HI

__all__ = ["COMPOUND_QUERIES", "QUERIES"]

_EN = """
reset my VPN password | Reset your VPN password
screen flickering | Screen flickers or shows lines
password expired | Change your password before it expires; Username or password is incorrect, but the password is right
forgot my password | Reset your network password
my account is locked out | Account locked after too many sign-in attempts
how do I set up two factor authentication | Set up multi-factor authentication for the first time
authenticator notifications not showing up on my phone | Not receiving MFA push notifications
I got a new phone, how do I move my authenticator | Move MFA to a new phone
outlook keeps prompting for password | Outlook keeps asking for your password
emails stuck and not sending | Emails stuck in the Outbox
mailbox full | Mailbox is full and cannot send email
set up out of office message | Set up an automatic out-of-office reply
add a signature to my emails | Add an email signature
received a suspicious email | Report a phishing email; How to recognise a phishing email
I clicked on a phishing link | I clicked a link in a phishing email
connect to vpn from home | Connect to the VPN from home
vpn keeps dropping | VPN disconnects every few minutes
vpn very slow at home | VPN is slow when working from home
wifi says connected but internet does not work | Wi-Fi connected but no internet
guest wifi for visitors | Get guest Wi-Fi for a visitor
internet is slow in the office | Slow internet in the office
printer offline | Printer shows offline after a driver update
paper jam | Printer error 13.B2: paper jam in the duplex unit; Printer says paper jam but there is no paper inside
scan a document and email it to myself | Scan a document to your email; Scan to email never arrives
prints look faded | Printed pages are faded or streaked
my laptop is slow | Laptop is very slow after startup
laptop won't power on | Laptop will not turn on
battery runs out quickly | Laptop battery drains quickly
laptop gets hot and fan noisy | Laptop overheats and the fan is loud
second monitor not detected | External monitor not detected
keyboard stopped working | Keyboard or touchpad stopped working
blue screen crash | Blue screen error on Windows
disk is full | Not enough disk space on your laptop
install a program | Install software from Software Center; Can I install software myself
need admin rights on my laptop | Request administrator rights
office says activation failed | Office apps show a product activation failed banner
restore a file I deleted | Restore a deleted file; Recover a file from backup
cloud drive not syncing | Cloud drive sync is stuck
share a file with an external partner | Share a file with someone outside the company
microphone not working in meetings, no sound | No sound in video calls
webcam not working in video call | Camera not working in video calls
share my screen during a call | Share your screen in a meeting
record a meeting | Record a meeting
book a meeting room | Book a meeting room
antivirus found a virus | Antivirus found a threat on my computer
lost my phone | Lost or stolen phone
laptop was stolen | Report a lost or stolen laptop
can I use a USB stick | Using USB drives
new employee account | Request an account for a new starter
someone is leaving the company, remove their access | Remove access when someone leaves
lost my badge | Replace a lost badge
desk phone has no service | Desk phone shows no service
forward office calls to mobile | Forward your office calls to your mobile
bitlocker recovery key | BitLocker error 0x80310059: BitLocker could not encrypt the drive
update windows | Install Windows updates
map a network drive | Map a network drive on Windows
calendar not updating on my phone | Calendar not syncing on phone
emails from external senders go to junk | External emails are going to the Junk folder
"""

_DE = """
Passwort vergessen | Netzwerkpasswort zurücksetzen
Konto ist gesperrt | Konto nach zu vielen Anmeldeversuchen gesperrt
mein Passwort läuft bald ab | Passwort vor dem Ablauf ändern
wie lang muss ein Passwort sein | Passwortregeln: Länge, Verlauf und Ablauf
Zugang für eine neue Kollegin beantragen | Konto für neue Mitarbeitende beantragen
Mitarbeiter verlässt die Firma | Zugänge beim Austritt entfernen
Anmeldung klappt nicht obwohl Passwort richtig | Anmeldung abgelehnt, obwohl das Passwort stimmt
Zwei-Faktor-Authentifizierung einrichten | Mehrstufige Anmeldung zum ersten Mal einrichten
Authenticator zeigt keine Benachrichtigung | Keine Push-Benachrichtigung der Authenticator-App
neues Handy Authenticator umziehen | Authenticator auf ein neues Handy übertragen
Handy verloren, kann mich nicht anmelden | Handy verloren, Anmeldung nicht möglich
Code aus der App funktioniert nicht | Sechsstelliger Code wird als ungültig abgelehnt
ich habe eine Anmeldung bestätigt, die nicht von mir war | Anmeldeanfrage bestätigt, die ich nicht ausgelöst habe
Outlook will immer wieder mein Kennwort | Outlook fragt ständig nach dem Passwort
Mails werden nicht verschickt | E-Mails bleiben im Postausgang hängen
Abwesenheitsnotiz für den Urlaub | Automatische Abwesenheitsnotiz einrichten
Postfach ist voll | Postfach voll, keine E-Mails mehr senden
Zugriff auf das Team-Postfach | Gemeinsames Postfach öffnen
Signatur in Outlook | E-Mail-Signatur hinzufügen
Kalender mit Kollegen teilen | Kalender für Kolleginnen und Kollegen freigeben
verdächtige Mail bekommen | Verdächtige E-Mail melden
VPN von zu Hause | VPN von unterwegs verbinden
VPN Verbindung bricht ab | VPN-Verbindung bricht immer wieder ab
VPN sagt Passwort falsch | VPN meldet Benutzername oder Passwort falsch
Internet im Büro langsam | Internet im Büro sehr langsam
Laufwerk einbinden | Netzlaufwerk verbinden
WLAN im Büro einrichten | Mit dem Firmen-WLAN verbinden
WLAN verbunden aber Internet geht nicht | WLAN verbunden, aber kein Internet
WLAN für Besucher | WLAN für Gäste und Besucher
Drucker ist offline | Drucker wird als offline angezeigt
Drucker installieren | Drucker hinzufügen
Papier steckt im Drucker fest | Papierstau im Drucker
Dokument einscannen und mailen | Dokument scannen und per E-Mail senden
mein Laptop ist langsam | Laptop ist sehr langsam
Bildschirm flackert | Bildschirm flackert oder zeigt Streifen
Akku ist schnell leer | Akku des Laptops hält nur kurz
externen Bildschirm anschließen | Zweiten Monitor anschließen
BitLocker Schlüssel beim Start | Laptop fragt nach dem BitLocker-Wiederherstellungsschlüssel
neuen Laptop bekommen | Neuen Laptop bestellen
Programm installieren | Software aus dem Softwarecenter installieren
Word sagt Lizenz ungültig | Office meldet ein Problem mit der Lizenz
Laptop startet ständig neu wegen Updates | Warum der Laptop Updates erzwingt
Administratorrechte bekommen | Administratorrechte auf dem Laptop
Dateien werden nicht synchronisiert | Cloud-Speicher synchronisiert nicht
Datei mit Externen teilen | Datei mit externen Partnern teilen
gelöschte Datei zurückholen | Gelöschte Datei wiederherstellen
keiner hört mich in der Videokonferenz | Kein Ton in der Videokonferenz
Konferenz im Besprechungsraum starten | Videokonferenz im Besprechungsraum starten
Firmenmails auf dem Smartphone | Dienstliche E-Mails auf dem Handy einrichten
Virus gefunden | Virenschutz meldet eine Bedrohung
darf ich einen USB-Stick benutzen | USB-Sticks und externe Festplatten
Laptop gestohlen | Verlorenes oder gestohlenes Gerät melden
"""

_HI = """
पासवर्ड भूल गया | नेटवर्क पासवर्ड रीसेट करें
मेरा खाता लॉक हो गया है | कई बार ग़लत पासवर्ड डालने से खाता लॉक हो गया
पासवर्ड एक्सपायर होने वाला है | पासवर्ड की मियाद ख़त्म होने से पहले उसे बदलें
पासवर्ड कितना लंबा होना चाहिए | पासवर्ड के नियम: लंबाई, इतिहास और मियाद
नए कर्मचारी का खाता बनवाना है | नए कर्मचारी के लिए खाते का अनुरोध करें
सही पासवर्ड फिर भी लॉगिन नहीं हो रहा | पासवर्ड सही होने पर भी साइन इन नहीं हो रहा
दो-चरणीय सत्यापन कैसे चालू करें | पहली बार दो-चरणीय सत्यापन सेट करें
ऑथेंटिकेटर की सूचना नहीं आती | ऑथेंटिकेटर ऐप की सूचना फ़ोन पर नहीं आ रही
नया फ़ोन लिया है ऑथेंटिकेटर कैसे ले जाएँ | ऑथेंटिकेटर को नए फ़ोन पर ले जाएँ
फ़ोन खो गया साइन इन नहीं हो पा रहा | फ़ोन खो गया और साइन इन को मंज़ूरी नहीं दे पा रहे
ऐप का कोड काम नहीं कर रहा | छह अंकों का कोड अमान्य बताया जा रहा है
आउटलुक पासवर्ड पूछता रहता है | आउटलुक बार-बार पासवर्ड माँग रहा है
ईमेल नहीं जा रहे | ईमेल आउटबॉक्स में अटके हुए हैं
छुट्टी का स्वचालित जवाब | छुट्टी पर अपने आप जवाब देने वाला संदेश लगाएँ
मेलबॉक्स भर गया | मेलबॉक्स भर गया है और ईमेल नहीं भेज पा रहे
फ़िशिंग ईमेल आया है | संदिग्ध ईमेल की रिपोर्ट करें
ईमेल में सिग्नेचर कैसे लगाएँ | ईमेल सिग्नेचर जोड़ें
अपना कैलेंडर साझा करना है | सहकर्मियों के साथ कैलेंडर साझा करें
घर से वीपीएन कैसे जोड़ें | घर या सफ़र से वीपीएन से जुड़ें
वीपीएन बार-बार कट जाता है | वीपीएन कनेक्शन बार-बार टूट जाता है
वीपीएन पासवर्ड ग़लत बताता है | वीपीएन कहता है कि यूज़रनेम या पासवर्ड ग़लत है
इंटरनेट धीमा है | दफ़्तर में इंटरनेट बहुत धीमा है
दफ़्तर का वाई-फ़ाई कैसे चलाएँ | दफ़्तर के वाई-फ़ाई से जुड़ें
वाई-फ़ाई जुड़ा है पर पेज नहीं खुलते | वाई-फ़ाई जुड़ा है पर इंटरनेट नहीं चल रहा
मेहमान के लिए वाई-फ़ाई | मेहमानों और आगंतुकों के लिए वाई-फ़ाई
प्रिंटर ऑफ़लाइन है | प्रिंटर ऑफ़लाइन दिख रहा है
प्रिंटर कैसे जोड़ें | नया प्रिंटर जोड़ें
प्रिंटर में काग़ज़ अटक गया | प्रिंटर में काग़ज़ फँस गया
स्कैन करके ईमेल पर भेजना | दस्तावेज़ स्कैन करके ईमेल पर भेजें
लैपटॉप धीमा है | लैपटॉप बहुत धीमा चल रहा है
स्क्रीन पर धारियाँ | स्क्रीन झिलमिलाती है या उस पर धारियाँ दिखती हैं
बैटरी जल्दी ख़त्म | लैपटॉप की बैटरी जल्दी ख़त्म हो जाती है
दूसरा मॉनिटर लगाना | दूसरा मॉनिटर जोड़ें
बिटलॉकर कुंजी माँग रहा है | लैपटॉप बिटलॉकर रिकवरी कुंजी माँग रहा है
नया लैपटॉप चाहिए | नए लैपटॉप का ऑर्डर दें
प्रोग्राम इंस्टॉल करना है | सॉफ़्टवेयर सेंटर से सॉफ़्टवेयर इंस्टॉल करें
ऑफ़िस लाइसेंस त्रुटि | ऑफ़िस लाइसेंस की समस्या बता रहा है
अपडेट के लिए लैपटॉप अपने आप रीस्टार्ट | लैपटॉप अपडेट के लिए ज़बरदस्ती रीस्टार्ट क्यों करता है
एडमिन अधिकार चाहिए | लैपटॉप पर एडमिन अधिकार
फ़ाइलें सिंक नहीं हो रहीं | क्लाउड ड्राइव सिंक नहीं हो रहा
बाहर के व्यक्ति से फ़ाइल साझा करना | बाहरी साझेदारों के साथ फ़ाइल साझा करें
मिटाई हुई फ़ाइल वापस चाहिए | मिटाई गई फ़ाइल वापस लाएँ
मीटिंग में मेरी आवाज़ नहीं जा रही | वीडियो मीटिंग में आवाज़ नहीं आ रही
मीटिंग रूम से कॉल शुरू करना | मीटिंग रूम में वीडियो मीटिंग शुरू करें
फ़ोन पर ऑफ़िस का ईमेल | फ़ोन पर दफ़्तर का ईमेल सेट करें
एंटीवायरस ने वायरस पकड़ा | एंटीवायरस ने ख़तरा पाया है
यूएसबी ड्राइव इस्तेमाल कर सकते हैं | यूएसबी ड्राइव और बाहरी हार्ड डिस्क
लैपटॉप चोरी हो गया | खोए या चोरी हुए डिवाइस की रिपोर्ट करें
ग़लत पासवर्ड से वीपीएन नहीं जुड़ रहा | वीपीएन कहता है कि यूज़रनेम या पासवर्ड ग़लत है
ईमेल का अटैचमेंट बहुत बड़ा | ईमेल आउटबॉक्स में अटके हुए हैं
हेडसेट से आवाज़ नहीं | वीडियो मीटिंग में आवाज़ नहीं आ रही
"""

#: German queries written as one compound word, as people type them; the articles that
#: answer each say its parts apart (``Papierstau im Drucker`` for ``Druckerpapierstau``).
_DE_COMPOUNDS = """
Druckerpapierstau | Papierstau im Drucker
Laptopakku | Akku des Laptops hält nur kurz
Gästewlan | WLAN für Gäste und Besucher
Bildschirmflackern | Bildschirm flackert oder zeigt Streifen
Kontosperre | Konto nach zu vielen Anmeldeversuchen gesperrt
Postfachgröße | Postfach voll, keine E-Mails mehr senden
Monitoranschluss | Zweiten Monitor anschließen
Handyverlust | Handy verloren, Anmeldung nicht möglich; Verlorenes oder gestohlenes Gerät melden
Laptopbestellung | Neuen Laptop bestellen
Kalenderfreigabe | Kalender für Kolleginnen und Kollegen freigeben
Softwareinstallation | Software aus dem Softwarecenter installieren
Videokonferenzraum | Videokonferenz im Besprechungsraum starten
Virenschutzmeldung | Virenschutz meldet eine Bedrohung
Passwortablauf | Passwort vor dem Ablauf ändern; Passwortregeln: Länge, Verlauf und Ablauf
Netzlaufwerkverbindung | Netzlaufwerk verbinden
Druckerinstallation | Drucker hinzufügen
Dateiwiederherstellung | Gelöschte Datei wiederherstellen
Emailsignatur | E-Mail-Signatur hinzufügen
Officelizenz | Office meldet ein Problem mit der Lizenz
Handyeinrichtung | Dienstliche E-Mails auf dem Handy einrichten; Authenticator auf ein neues Handy übertragen
"""


def _parsed(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    rows = []
    for line in text.strip().splitlines():
        query, answers = line.split(" | ")
        rows.append((query.strip(), tuple(answer.strip() for answer in answers.split("; "))))
    return tuple(rows)


#: ``corpus.source`` of a sample -> its ``(query, titles of the articles that answer it)``.
QUERIES: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    SAMPLE: _parsed(_EN), SAMPLE_DE: _parsed(_DE), SAMPLE_HI: _parsed(_HI),
}
#: ``corpus.source`` of a sample -> its compound-word queries (``QUERIES``' form): what a
#: query's compound words split into (kbsim.store.analyzer) is measured on these.
COMPOUND_QUERIES: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {SAMPLE_DE: _parsed(_DE_COMPOUNDS)}
