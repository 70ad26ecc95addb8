"""Word lists of the rule-based span finders: capitalised words that never name an entity,
name connectors, noun-phrase triggers, stop words and adjectives stripped from phrases."""

from __future__ import annotations

#: capitalised words that are never (part of) an entity name
STOP_CAPS = {
    "I", "I'm", "I’m", "I'll", "I’ll", "I've", "I’ve", "I'd", "I’d", "Im", "OK", "Ok", "Okay", "Hey",
    "Hi", "Hello", "Thanks", "Thank", "Yes", "Yeah", "Yep", "No", "Nope", "Oh", "Wow", "Haha", "Hahaha",
    "Lol", "LOL", "Sure", "Sounds", "Great", "Awesome", "Perfect", "Also", "But", "And", "So", "Just",
    "Let", "Let's", "Let’s", "Maybe", "Please", "Dear", "ASAP", "PS", "BTW", "OMG", "TBH",
    "Weekend", "Cheers", "Bye", "Absolutely", "Totally", "Definitely", "Anyway", "Well", "Hmm",
    "Good", "Nice", "Cool", "Sweet", "Yay", "Ah", "Aw", "Aww", "Ugh", "Alright", "Right", "Exactly",
    "Sorry", "Welcome", "Congrats", "Congratulations", "Happy", "Merry", "Best", "Regards", "Love",
    "God", "Gosh", "Dude", "Bro", "Guys", "Everyone", "Team", "The", "A", "An", "It", "It's", "It’s",
    "You", "You're", "You’re", "We", "We're", "We’re", "He", "She", "They", "My", "Your", "Our",
    "This", "That", "What", "When", "Where", "Who", "Whom", "Whose", "Which", "How", "Why", "Did", "Do",
    "Does", "Is", "Was", "Are", "Were", "Will", "Would", "Can", "Could", "Should", "Have", "Has", "Had",
    "If", "Or", "In", "On", "At", "For", "With", "After", "Before", "During", "From", "To", "Of", "As",
    "Not", "Any", "All", "Some", "Here", "There", "Then", "Now", "Today", "Tonight", "Tomorrow",
    "Yesterday", "Mr", "Mrs", "Ms", "Dr", "Dear", "Hope", "Looking", "Can't", "Can’t", "Don't", "Don’t",
    "Be", "Been", "Being", "Get", "Got", "Make", "Made", "Go", "See", "Tell", "Ask", "Know", "Think",
    "Want", "Need", "Try", "Keep", "Take", "Give", "Come", "Enjoy", "Remember", "Check", "Feel",
    "Wanna", "Gonna", "Gotta", "Whoa", "Phew", "Btw", "Omg", "Ya", "Yo", "Hiya", "Howdy", "Lots",
    "Very", "Really", "Super", "Much", "More", "Most", "Many", "Each", "Every", "Both", "Either",
    "Neither", "Such", "Since", "While", "Until", "Because", "Though", "Although", "Once", "Still",
    "Even", "Yet", "Only", "Plus", "Actually", "Honestly", "Seriously", "Basically", "Hopefully",
}
CONNECTORS = {"of", "the", "de", "la", "del", "von", "van", "da", "di", "du", "le", "y"}
QUESTION_LEAD = {"Did", "Does", "Do", "Is", "Was", "Are", "Were", "What", "When", "Where", "Who", "Whom",
                  "Whose", "Which", "How", "Why", "Will", "Would", "Can", "Could", "Should", "Has", "Have",
                  "Had", "In", "On", "At", "After", "Before", "During", "According", "The", "A", "An",
                  "If", "Besides", "Apart", "Between", "Among", "Except", "List", "Name", "Describe",
                  "Tell", "Give", "Please", "Compare", "Summarize", "Explain"}


NP_TRIGGERS = {"a", "an", "the", "my", "your", "his", "her", "our", "their", "its", "some", "any",
                "these", "those", "this", "that", "more", "no"}
STOPWORDS = set("""
a an the and or but if then else of to in on at by for with from about as into onto over under
up down out off again further once here there when where why how all any both each few more most
other some such no nor not only own same so than too very can will just don should now is are was
were be been being have has had having do does did doing would could might must shall may i me my
myself we our ours you your yours he him his she her hers it its they them their what which who
whom this that these those am get got getting go going gone went make made making take took taking
let lets know knew think thought want wanted need needed like liked love loved see saw seen try
tried keep kept give gave come came feel felt say said tell told ask asked look looking looks
sound sounds sounded seem seems help helps use used using find found put work works working
really totally definitely absolutely super pretty quite also maybe even still always never ever
gonna wanna gotta yeah yes okay ok oh wow haha lol thanks thank hey hi hello please sure
what's it's that's there's here's i'm you're we're they're i'll you'll we'll i've you've we've
i'd you'd can't don't won't isn't aren't didn't doesn't couldn't wouldn't shouldn't let's
one ones something anything everything nothing someone anyone everyone somebody everybody
lot lots bit kind sort way thing things stuff time times day days week weeks month months year years
moment moments idea ideas chance point part place places fun plan plans today tonight tomorrow
yesterday weekend morning afternoon evening night while end start rest sense mind heads head
minute minutes hour hours second seconds person people guy guys other others side vibe vibes
question questions answer reason step steps tip tips advice help difference deal news update
before after behind together sometime sometimes soon later again around through across along between
beyond near within without toward towards upon against among during since until via already almost
ago else enough instead anyway ahead away back often usually probably especially though although
because while whether yet ever once twice each every either neither per plus than like unlike
sounds sound awesome amazing gonna perfect ready excited glad happy sorry able sure right wrong
despite outside inside online offline forward afterwards someday throughout apart alive alone first
next better best worse worst high low fresh strong sooner alike overall together
makes make feels gives turns flows shows looks seems goes comes gets takes keeps helps brings adds
needs works means becomes led caused showed happening started
compared coming going getting making taking added fit fits
""".split())
ADJ_STRIP = set("""
great good new fresh quick little big nice awesome amazing perfect favorite favourite special
delicious super cool fun best better whole next last first other same few many much own real
great huge small large tiny quick short long old young hot cold warm nice lovely wonderful
fantastic incredible excellent solid busy full free easy hard tough simple quick early late
usual regular certain different specific particular extra main entire proper local latest recent
upcoming exciting interesting beautiful sweet healthy heavy quiet
proper total complete bit decent serious major minor absolute ultimate true
unique exciting interesting similar
key solid incredible ideal important essential smooth
""".split())
GENERIC_SINGLE = STOPWORDS | ADJ_STRIP | set("""
session sessions practice game games show music food dinner lunch breakfast meal job work
experience progress goal goals plan energy challenge challenges spot area stuff life world ones
team group friends friend chat conversation message info details detail photos photo pictures
reminder thoughts story space skills characters character couple wait trust relationships
change effort updates call role leader items system data opinion project
feeling feelings taste touch vibe mood future past approach
""".split())
