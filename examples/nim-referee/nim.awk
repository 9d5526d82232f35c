# A tourney referee in awk (docs/games.md, "A referee in any language"): one pile,
# take 1..3 stones, taking the last wins. One JSON request per line in, one answer out.
# The game state tourney keeps for us: [pile, seat to move, winner or -1].
function field(name,   re) {  # the raw JSON value of "name" in this request (flat values only)
    re = "\"" name "\":(\"[^\"]*\"|-?[0-9]+|\\[[^]]*\\])"
    if (!match($0, re)) return ""
    return substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 3)
}
function unquote(s) { gsub(/^"|"$/, "", s); return s }
function answer(s) { print s; fflush() }
function state(pile, turn, winner) { return "{\"state\":[" pile "," turn "," winner "]}" }
{
    op = unquote(field("op"))
    if (op == "default_board") answer("{\"board\":\"10\"}")
    else if (op == "validate_board" || op == "new_game") {
        board = unquote(field("board"))
        if (board !~ /^[0-9]+$/ || board + 0 < 1 || board + 0 > 1000)
            answer("{\"error\":\"a nim board is a pile size 1..1000\"}")
        else if (op == "validate_board") answer("{\"ok\":true}")
        else answer(state(board + 0, 0, -1))
    } else {
        s = field("state"); gsub(/[][]/, "", s); split(s, st, ",")
        pile = st[1] + 0; turn = st[2] + 0; winner = st[3] + 0
        if (op == "view") {
            legal = ""
            for (k = 1; winner < 0 && k <= 3 && k <= pile; k++) legal = legal (k > 1 ? "," : "") "\"" k "\""
            outcome = "null"
            if (winner >= 0)
                outcome = "{\"winners\":[" winner "],\"scores\":[" (winner == 0) "," (winner == 1) "]," \
                          "\"reason\":\"" (pile == 0 ? "took the last" : "opponent forfeited") "\"}"
            answer("{\"to_move\":" turn ",\"legal\":[" legal "],\"outcome\":" outcome ",\"render\":\"pile " pile "\\n\"}")
        } else if (op == "play") {
            move = unquote(field("move"))
            if (winner >= 0 || move !~ /^[0-9]+$/ || move + 0 < 1 || move + 0 > 3 || move + 0 > pile)
                answer("{\"illegal\":\"cannot take " move " from " pile "\"}")
            else { pile -= move; answer(state(pile, 1 - turn, pile == 0 ? turn : -1)) }
        } else if (op == "forfeit") answer(state(pile, turn, 1 - field("seat")))
        else answer("{\"error\":\"unknown request " op "\"}")
    }
}
