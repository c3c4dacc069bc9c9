from shared.currencies import currency_terms_held, question_currencies, stated_currencies


def test_a_question_names_a_currency_by_name_or_code_never_by_an_amount_symbol():
    assert question_currencies("team plan price in euros") == {"EUR": {"euro"}}
    assert question_currencies("business monthly GBP") == {"GBP": {"gbp"}}
    assert question_currencies("price in australian dollars") == {"AUD": {"australian", "dollar"}}
    assert question_currencies("paid in EUR, refund in dollars") == {"EUR": {"eur"}, "USD": {"dollar"}}
    assert question_currencies("who approves a $1000 refund") == {}
    assert question_currencies("do local currency prices move with exchange rates") == {}


def test_a_unit_states_a_currency_in_any_form_and_a_qualified_dollar_is_not_the_us_one():
    assert stated_currencies("| European Union | EUR | €75 |") == {"EUR"}
    assert stated_currencies("| Japan | ¥12,000 |") == {"JPY"}
    assert stated_currencies("| Australia | A$119 |") == {"AUD"}
    assert stated_currencies("| Team | $79 | $790 |") == {"USD"}
    assert stated_currencies("We paid 300 US dollars.") == stated_currencies("Team costs US$79.") == {"USD"}
    assert stated_currencies("Seats are billed monthly.") == set()


def test_a_sentence_about_currency_in_general_holds_every_asked_currency_but_a_table_row_does_not():
    asked = question_currencies("paid in EUR, will my refund come back in dollars")
    general = "Refunds are issued in the currency of the original invoice."
    assert currency_terms_held(asked, general) == {"eur", "dollar"}
    assert currency_terms_held(asked, "| Region | Currency |", row=True) == set()
    assert currency_terms_held(asked, "| European Union | EUR | €75 |", row=True) == {"eur"}
    assert currency_terms_held(question_currencies("price in australian dollars"), "Team costs US$79.") == set()
    # Only where the question names a currency the passages state (`known`): Swiss francs are not one they deal in.
    assert currency_terms_held(asked, general, known=set()) == {"eur", "dollar"}  # two named: how they meet
    francs = question_currencies("can i pay in swiss francs")
    foreign = "Expensify converts foreign-currency receipts at the exchange rate of the transaction date."
    assert currency_terms_held(francs, foreign, known={"USD", "EUR", "JPY"}) == set()
    assert currency_terms_held(francs, foreign) == {"swiss", "franc"}  # known not given: any currency
