"""Stop words: the function words a language's analyzer drops (articles, pronouns,
prepositions, conjunctions, forms of "to be" and "to have").

Small lists, kept short on purpose: only words that never carry what an article is
about. Each is a subset of a published list:

- ``en``, ``de``, ``fr``, ``es``, ``it``, ``pt``, ``nl``: the Snowball project's stop
  lists (https://snowballstem.org/algorithms/, "stop.txt" of each language; BSD
  licence, Copyright (c) 2001 Dr Martin Porter, 2002 Richard Boulton), the stemmers'
  own companions;
- ``hi``: Jacques Savoy's Hindi stop list for CLEF (University of Neuchâtel,
  https://members.unine.ch/jacques.savoy/clef/; BSD licence), the list Lucene's Hindi
  analyzer ships.

They are written as the text has them; the analyzer normalises them as it does text
(NFKC and case folding), so ``daß`` and ``dass`` are both dropped.
"""

from __future__ import annotations

__all__ = ["STOP_WORDS"]

_EN = """
a about above after again against all am an and any are as at be because been before being below
between both but by could did do does doing down during each few for from further had has have having
he her here hers herself him himself his how i if in into is it its itself me more most my myself no
nor not of off on once only or other ought our ours ourselves out over own same she should so some
such than that the their theirs them themselves then there these they this those through to too under
until up very was we were what when where which while who whom why with would you your yours
yourself yourselves
"""

_DE = """
aber alle allem allen aller alles als also am an andere anderem anderen anderer anderes anders auch
auf aus bei bin bis bist da damit dann das dass daß dein deine dem den der des dessen dich die dies
diese diesem diesen dieser dieses dir doch dort du durch ein eine einem einen einer eines er es etwas
euch euer eure für hatte hatten hier hin hinter ich ihm ihn ihnen ihr ihre ihrem ihren ihrer im in
indem ins ist jede jedem jeden jeder jedes jene jenem jenen jener jenes jetzt kann kein keine keinem
keinen keiner können könnte man manche mein meine meinem meinen meiner mich mir mit muss musste nach
nicht nichts noch nun nur ob oder ohne sehr sein seine seinem seinen seiner seit sich sie sind so
solche soll sollte sondern sonst über um und uns unser unsere unter viel vom von vor während war
waren warst was weg weil welche welchem welchen welcher welches wenn werde werden wie wieder will
wir wird wirst wo wollen wollte würde würden zu zum zur zwar zwischen
"""

_FR = """
à ai au aux avec avez avons c ce ces d dans de des du elle elles en es est et été être eu eux il ils
j je l la le les leur leurs lui m ma mais me même mes moi mon n ne nos notre nous on ont ou par pas
pour qu que qui s sa se ses son sont sur t ta te tes toi ton tu un une vos votre vous y
"""

_ES = """
a al algo algunas algunos ante antes como con contra cual cuando de del desde donde durante e el él
ella ellas ellos en entre era es esa ese eso esta está están estas este esto estos fue ha hasta hay
la las le les lo los más me mi mí mis mucho muy nada ni no nos nosotros o os otra otras otro otros
para pero poco por porque que qué quien quienes se ser si sí sin sobre su sus también tanto te ti
todo todos tu tú tus un una uno unos vosotros y ya yo
"""

_IT = """
a ad agli ai al alla alle allo anche avere che chi ci come con da dagli dai dal dalla dalle degli
dei del della delle dello di e è ed gli ha hanno ho i il in io la le lei li lo loro lui ma mi mia
mio ne negli nei nel nella nelle noi non o per più quale quando quella quelle quello questa queste
questo se si sia sono su sua sue sui sul sulla suo tra tu un una uno voi
"""

_PT = """
a à ao aos as até com como da das de dela dele deles do dos e é ela elas ele eles em entre era essa
esse esta este eu foi há isso isto já lhe mais mas me mesmo meu minha muito na não nas nem no nos
nós o os ou para pela pelas pelo pelos por qual quando que quem se sem seu sua são também te tem
um uma você
"""

_NL = """
aan al als bij dan dat de der deze die dit door dus een en er ge had heb hebben heeft het hier hij
hoe hun ik in is je kan maar me men met mij mijn na naar niet nog nu of om onder ons ook op over
te tegen toen tot u uit van veel voor want was wat we wel werd wie wij wordt zal ze zich zij zijn
zo zonder zou
"""

_HI = """
अंदर अत अपना अपनी अपने अभी आदि आप इत्यादि इन इनका इन्हीं इन्हें इस इसका इसकी इसके इसमें इसी इसे उन उनका
उनकी उनके उनको उन्हीं उन्हें उस उसके उसी उसे एक एवं ऐसे और कई कर करता करते करना करने करें कहते कहा
का कि किया किस किसी की कुछ के को कोई कौन गया जब जहाँ जा जैसा जैसे जो तक तब तरह तो था थी थे दिया
दो द्वारा न नहीं ना ने पर पहले फिर बहुत बाद भी मगर में यदि यह यहाँ यही या ये रहा रहे लिए लिये लेकिन व
वह वहाँ वहीं वाले वे संग सकता सकते सबसे सभी साथ से सो ही हुआ हुई हुए है हैं हो होता होती होते होना होने
"""

#: Language code -> its stop words.
STOP_WORDS: dict[str, tuple[str, ...]] = {
    code: tuple(text.split())
    for code, text in (("en", _EN), ("de", _DE), ("fr", _FR), ("es", _ES), ("it", _IT), ("pt", _PT),
                       ("nl", _NL), ("hi", _HI))
}
