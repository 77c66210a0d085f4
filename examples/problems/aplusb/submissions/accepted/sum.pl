main :-
    read_line_to_string(user_input, Line),
    split_string(Line, " ", " ", Parts),
    exclude(==(""), Parts, [A0, B0]),
    number_string(A, A0),
    number_string(B, B0),
    Sum is A + B,
    format("~w~n", [Sum]).
