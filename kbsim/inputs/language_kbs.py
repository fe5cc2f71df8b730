# ruff: noqa: E501 (one article or query a line: the text is data)
"""Five small knowledge bases in other languages, with plain queries: how well search finds
an article in German, Hindi, Japanese, French, and in a mixed knowledge base of four
languages (docs/results.md, "Search quality: five languages").

An HR help desk (leave, pay, travel costs, sick leave, parking, canteen, home office, a
first day, passwords, rooms), ten articles a language, each with an id of its own. Five
queries a language, written as people type them (the German ones as compound words, as
German speakers write them: ``Reisekostenabrechnung``, ``Urlaubstage``). The mixed
knowledge base holds the same three topics (travel costs, leave, parking) in German,
Hindi, Japanese and English, twelve articles, and twelve queries, three a language: a
query must find its topic's article in its own language.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LANGUAGE_KBS", "LanguageKB"]


@dataclass(frozen=True)
class LanguageKB:
    """A small knowledge base: its articles (``(id, title, content)``), the language it is
    written in (``mixed``: several), and its queries (``(query, id of the answer)``)."""

    name: str
    language: str
    articles: tuple[tuple[str, str, str], ...]
    queries: tuple[tuple[str, str], ...]


def _rows(text: str, fields: int) -> tuple[tuple[str, ...], ...]:
    rows = tuple(tuple(field.strip() for field in line.split(" | ")) for line in text.strip().splitlines())
    wrong = next((row for row in rows if len(row) != fields), None)
    if wrong is not None:
        raise ValueError(f"a row of a language knowledge base has {len(wrong)} fields, not {fields}: {wrong[0]!r}")
    return rows


_DE = _rows("""
reise/abrechnung | Reisekosten abrechnen | Die Reisekosten einer Dienstreise rechnen Sie im Personalportal ab. Laden Sie die Belege als PDF hoch; die Abrechnung wird mit dem nächsten Gehalt ausgezahlt.
urlaub/antrag | Urlaub beantragen | Urlaub beantragen Sie im Personalportal. Wie viele Tage Ihnen noch bleiben, zeigt das Urlaubskonto. Ihre Führungskraft genehmigt den Antrag.
krank/meldung | Krankmeldung einreichen | Melden Sie sich am ersten Tag vor Arbeitsbeginn bei Ihrer Führungskraft krank. Ab dem vierten Tag brauchen Sie eine Bescheinigung vom Arzt.
gehalt/abrechnung | Gehaltsabrechnung herunterladen | Ihre monatliche Gehaltsabrechnung finden Sie im Personalportal unter Dokumente. Fragen zur Lohnsteuer beantwortet die Personalabteilung.
parken/ausweis | Parkausweis für die Tiefgarage | Einen Parkausweis für die Tiefgarage beantragen Sie am Empfang. Die Plätze werden nach der Warteliste vergeben.
kantine/karte | Kantinenkarte aufladen | Die Kantinenkarte laden Sie am Automaten im Foyer auf, bar oder mit Girokarte. Das Guthaben verfällt nicht.
homeoffice/regeln | Arbeiten im Homeoffice | Sie dürfen bis zu drei Tage pro Woche von zu Hause arbeiten. Stimmen Sie die Tage mit Ihrem Team ab.
start/erster-tag | Der erste Arbeitstag | Am ersten Arbeitstag holt Sie Ihre Führungskraft am Empfang ab. Laptop und Zugänge liegen bereit.
konto/passwort | Passwort zurücksetzen | Wenn Sie Ihr Passwort vergessen haben, setzen Sie es im Self-Service-Portal zurück. Das neue Passwort braucht mindestens vierzehn Zeichen.
raum/buchen | Besprechungsraum buchen | Räume buchen Sie im Kalender als Ressource. Große Räume für mehr als zwölf Personen bucht der Empfang.
""", 3)
_DE_QUERIES = _rows("""
Reisekostenabrechnung | reise/abrechnung
Urlaubstage | urlaub/antrag
ich bin krank | krank/meldung
wo ist meine Gehaltsabrechnung | gehalt/abrechnung
Parkplatz in der Tiefgarage | parken/ausweis
""", 2)

_HI = _rows("""
hr/chutti | छुट्टी के लिए आवेदन करें | छुट्टी का आवेदन कर्मचारी पोर्टल में करें। आपके बचे हुए दिन छुट्टी खाते में दिखते हैं। आपका प्रबंधक आवेदन को मंज़ूरी देता है।
hr/vetan | वेतन पर्ची डाउनलोड करें | हर महीने की वेतन पर्ची कर्मचारी पोर्टल में दस्तावेज़ों के अंदर मिलती है। कर से जुड़े सवालों के लिए मानव संसाधन विभाग से संपर्क करें।
hr/yatra | यात्रा खर्च का दावा करें | व्यावसायिक यात्रा का खर्च पोर्टल में दर्ज करें और रसीदें पीडीएफ़ के रूप में अपलोड करें। भुगतान अगले वेतन के साथ होता है।
hr/bimari | बीमारी की सूचना दें | बीमार होने पर काम शुरू होने से पहले अपने प्रबंधक को बताएँ। तीन दिन से ज़्यादा की बीमारी के लिए डॉक्टर का प्रमाणपत्र ज़रूरी है।
hr/parking | पार्किंग पास के लिए आवेदन | भूमिगत पार्किंग का पास रिसेप्शन पर मिलता है। जगहें प्रतीक्षा सूची के क्रम में दी जाती हैं।
hr/canteen | कैंटीन कार्ड रिचार्ज करें | कैंटीन कार्ड को लॉबी में लगी मशीन पर नकद या डेबिट कार्ड से रिचार्ज करें। बची हुई राशि कभी ख़त्म नहीं होती।
hr/ghar-se-kaam | घर से काम करने के नियम | आप हफ़्ते में तीन दिन तक घर से काम कर सकते हैं। अपनी टीम के साथ दिन तय करें।
hr/pehla-din | नौकरी का पहला दिन | पहले दिन आपका प्रबंधक आपको रिसेप्शन से लेगा। लैपटॉप और खाते तैयार रहते हैं।
it/password | पासवर्ड रीसेट करें | पासवर्ड भूल जाने पर स्वयं सेवा पोर्टल में नया पासवर्ड बनाएँ। नया पासवर्ड कम से कम चौदह अक्षरों का होना चाहिए।
office/meeting-room | मीटिंग रूम बुक करें | मीटिंग रूम कैलेंडर में संसाधन के रूप में बुक करें। बारह से ज़्यादा लोगों के लिए बड़े कमरे रिसेप्शन बुक करता है।
""", 3)
_HI_QUERIES = _rows("""
छुट्टी कैसे लें | hr/chutti
वेतन पर्ची कहाँ मिलेगी | hr/vetan
मैं बीमार हूँ | hr/bimari
पासवर्ड भूल गया | it/password
कैंटीन कार्ड में पैसे डालें | hr/canteen
""", 2)

_JA = _rows("""
jinji/kyuka | 有給休暇を申請する | 有給休暇は人事ポータルから申請します。残りの日数は休暇残高で確認できます。上司が申請を承認します。
jinji/kyuyo | 給与明細をダウンロードする | 毎月の給与明細は人事ポータルの書類から確認できます。税金についての質問は人事部に問い合わせてください。
jinji/ryohi | 出張旅費を精算する | 出張の旅費は経費システムで精算します。領収書をPDFでアップロードしてください。精算額は次の給与と一緒に支払われます。
jinji/byoki | 病気で休むときの連絡 | 体調が悪いときは始業前に上司へ連絡してください。四日以上休む場合は医師の診断書が必要です。
soumu/chusha | 駐車場の利用申請 | 地下駐車場の駐車許可証は受付で申請します。空きが出た順に割り当てられます。
soumu/shokudo | 社員食堂のカードにチャージする | 食堂カードはロビーの機械で現金かデビットカードでチャージできます。残高に期限はありません。
jinji/zaitaku | 在宅勤務のルール | 在宅勤務は週三日まで可能です。チームと相談して曜日を決めてください。
jinji/shonichi | 入社初日の流れ | 初日は上司が受付まで迎えに来ます。ノートパソコンとアカウントは準備されています。
it/password | パスワードをリセットする | パスワードを忘れた場合は、セルフサービスポータルで新しいパスワードを設定します。
soumu/kaigishitsu | 会議室を予約する | 会議室はカレンダーでリソースとして予約します。十二人以上の大きな部屋は受付が予約します。
""", 3)
_JA_QUERIES = _rows("""
休暇を取りたい | jinji/kyuka
給与明細はどこ | jinji/kyuyo
経費精算 | jinji/ryohi
駐車場を使いたい | soumu/chusha
在宅勤務できる日数 | jinji/zaitaku
""", 2)

_FR = _rows("""
rh/conges | Demander des congés | Les congés se demandent dans le portail RH. Le solde de jours restants est affiché dans votre compte de congés. Votre responsable valide la demande.
rh/paie | Télécharger la fiche de paie | Votre fiche de paie mensuelle se trouve dans le portail RH, rubrique Documents. Pour les questions d'impôts, contactez le service du personnel.
rh/frais | Note de frais de déplacement | Les frais d'un déplacement professionnel se déclarent dans le portail. Joignez les justificatifs en PDF ; le remboursement arrive avec le salaire suivant.
rh/maladie | Arrêt maladie | Prévenez votre responsable avant le début de la journée. À partir du quatrième jour, un certificat médical est nécessaire.
services/parking | Badge de parking | Le badge du parking souterrain se demande à l'accueil. Les places sont attribuées selon la liste d'attente.
services/cantine | Recharger la carte de cantine | La carte de cantine se recharge à la borne du hall, en espèces ou par carte bancaire. Le solde n'expire jamais.
rh/teletravail | Règles du télétravail | Vous pouvez travailler à domicile jusqu'à trois jours par semaine. Choisissez les jours avec votre équipe.
rh/premier-jour | Le premier jour | Le premier jour, votre responsable vient vous chercher à l'accueil. L'ordinateur portable et les accès sont prêts.
it/mot-de-passe | Réinitialiser le mot de passe | Si vous avez oublié votre mot de passe, choisissez-en un nouveau sur le portail libre-service. Il doit compter au moins quatorze caractères.
services/salle | Réserver une salle de réunion | Les salles se réservent dans le calendrier comme ressource. L'accueil réserve les grandes salles de plus de douze personnes.
""", 3)
_FR_QUERIES = _rows("""
poser des jours de congé | rh/conges
ma fiche de paie | rh/paie
rembourser mes frais | rh/frais
je suis malade | rh/maladie
mot de passe oublié | it/mot-de-passe
""", 2)

_EN = _rows("""
en/expenses | Claim travel expenses | Claim the costs of a business trip in the HR portal. Upload the receipts as a PDF; the refund is paid with your next salary.
en/leave | Request annual leave | Request leave in the HR portal. Your remaining days are shown in your leave balance, and your manager approves the request.
en/parking | Parking permit for the garage | Ask reception for a permit for the underground garage. Spaces are given out in waiting-list order.
""", 3)


def _by_id(articles: tuple[tuple[str, ...], ...], *ids: str) -> tuple[tuple[str, str, str], ...]:
    found = {row[0]: row for row in articles}
    return tuple((found[i][0], found[i][1], found[i][2]) for i in ids)


#: The same three topics in four languages (German, Hindi and Japanese articles as above).
_MIXED = (_by_id(_DE, "reise/abrechnung", "urlaub/antrag", "parken/ausweis")
          + _by_id(_HI, "hr/yatra", "hr/chutti", "hr/parking")
          + _by_id(_JA, "jinji/ryohi", "jinji/kyuka", "soumu/chusha")
          + _by_id(_EN, "en/expenses", "en/leave", "en/parking"))
_MIXED_QUERIES = _rows("""
Reisekostenabrechnung | reise/abrechnung
Urlaubstage | urlaub/antrag
Parkausweis beantragen | parken/ausweis
यात्रा खर्च | hr/yatra
छुट्टी कैसे लें | hr/chutti
पार्किंग पास चाहिए | hr/parking
出張旅費の精算 | jinji/ryohi
有給休暇 | jinji/kyuka
駐車場 | soumu/chusha
travel expenses | en/expenses
annual leave | en/leave
parking permit | en/parking
""", 2)


def _kb(name: str, language: str, articles, queries) -> LanguageKB:
    kb = LanguageKB(name, language, tuple((a, t, c) for a, t, c in articles), tuple((q, a) for q, a in queries))
    ids = {article_id for article_id, _, _ in kb.articles}
    if len(ids) != len(kb.articles) or not all(answer in ids for _, answer in kb.queries):
        raise ValueError(f"the {name} knowledge base repeats an id, or a query's answer is none of its articles")
    return kb


#: The five knowledge bases, in table order.
LANGUAGE_KBS: tuple[LanguageKB, ...] = (
    _kb("German", "de", _DE, _DE_QUERIES),
    _kb("Hindi", "hi", _HI, _HI_QUERIES),
    _kb("Japanese", "ja", _JA, _JA_QUERIES),
    _kb("French", "fr", _FR, _FR_QUERIES),
    _kb("mixed", "mixed", _MIXED, _MIXED_QUERIES),
)
