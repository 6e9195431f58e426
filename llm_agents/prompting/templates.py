"""The prompts, after the papers, in one place (``str.format`` templates).

Where a paper prints its prompt, the wording here follows it and the game-specific words are made
generic (Hanabi's "Clue Suggestion" becomes "what my partner needs from me next"; CoBlock's
inventory becomes "resources"). Paper 004 prints its prompts as figures only; its captions say what
each strategy does, and the wording below follows Akata et al.'s repeated-game prompts it builds on.

Sources:

* 000 (Li et al.) App. A.2 initial belief state and §4.2 belief update: :data:`BELIEF_INITIAL`,
  :data:`BELIEF_UPDATE`, :data:`BELIEF_ACTION`.
* 001 (Yim et al.) §3.2-3.3 first/second-order ToM planning with the recommender's top-k:
  :data:`TOM_PLANNING_1`, :data:`TOM_PLANNING_2`, :data:`TOP_K_SECTION`.
* 002 (Agashe et al.) App. C.1 agent prompt, C.2 ToM reasoning, C.3 verification:
  :data:`AGENT_ROLE`, :data:`TOM_REASONING`, :data:`VERIFICATION`.
* 003 (Wu et al.) §3 steps 2-3 and App. B.2: :data:`PARTNER_MODELLING`, :data:`SELF_REFLECTION`.
* 004 (Riemer et al.) App. C.1 Figs. 1-18: :data:`QA_QUESTION`, :data:`COT_INSTRUCTION`,
  :data:`PLANS_INSIGHTS`, :data:`REFLEXION_REFLECT`, :data:`S2A`, :data:`SOCIAL_PREDICTION`,
  :data:`ORACLE`, :data:`ORACLE_MAX`, :data:`PREDICT_QUESTION`, :data:`LM_PREDICT_STEM`.
"""

from __future__ import annotations

#: The language of these templates (the games' matcher speaks it too: ``match_action(language=)``).
LANGUAGE = "en"

# ----------------------------------------------------------------------------- every prompt
#: 002 App. C.1, generalised: what is asked of the model (system prompt, after the rules). It names
#: no seat: the game's own rules and observation say who the player is (one voice per prompt).
AGENT_ROLE = (
    "At each time step I will provide you with the relevant information of the game and the "
    "legal actions; help me select the best next action."
)

#: Paper 000's system line (the authors' code), used with the game's own reply format
#: (``answer_format="game"``) instead of :data:`AGENT_ROLE`, which speaks of listed actions.
GAME_ROLE = "You are playing a text game with the user."

#: The header of the agent's list of the legal actions (shown unless the observation lists them).
LEGAL_HEADER = "Legal actions:"

#: Asked when the observation does not already end with a question (004's "Q: ... A:" style).
QA_QUESTION = "Q: Which action do you choose?"

#: Answer format, constrained decoding (the schema enforces it; this line tells the model too).
JSON_FORMAT = (
    'Reply with a JSON object with {keys}. "action" must be exactly one of the legal actions '
    "listed above."
)
JSON_FIELD = '"{name}": {description}'
#: The chat message field (chat games): described wherever it is required.
MESSAGE_FIELD = "a short message to your teammates, sent with your action (may be empty)"

#: Answer format, plain text (002 App. C.1: "Format your response as ... Action: ...").
TEXT_FORMAT = (
    "Format your response as\n{lines}Action: <one of the legal actions>\nDo not say anything else."
)
#: The action slot of :data:`TEXT_FORMAT`, and its wording when no actions are listed.
ACTION_SLOT = "<one of the legal actions>"
ACTION_SLOT_NO_MENU = "<your action, written as the rules say>"
#: Field labels of the plain-text format (``Reasoning: ...``); read back by the parser.
LABELS: dict[str, str] = {}
FIELD_LINE = "{label}: <{text}>"
ACTION_LABEL = "Action"
MESSAGE_LABEL = "Message"
MESSAGE_LINE = 'Message: "<{description}>"'

#: Shown before the examples block.
EXAMPLES_HEADER = "Here are examples of good answers (situations written in short):"

#: Re-prompt after an invalid answer, with the environment's feedback (000 App. B style); the
#: actions listed are the ones the agent may choose (a shortlist when there is one).
REPROMPT = (
    "Your answer could not be used: {feedback}\n"
    "Answer again in the required format, choosing exactly one of: {actions}."
)
#: The offer of the legal actions on request (``menu="tool"``), after the answer format.
TOOL_OFFER = "To see the list of legal actions first, reply with the single word LIST."
#: The re-prompt when the prompt lists no actions (``menu="none"``): the rules say how to act.
REPROMPT_NO_MENU = (
    "Your answer could not be used: {feedback}\n"
    "Answer again in the required format, with one action written as the rules say."
)
#: Feedback on an answer that names a legal action outside the shortlist (001's top-k).
NOT_CANDIDATE = "{action} is not one of the candidate actions now"
#: Feedback on an answer that names a candidate beside actions that are not candidates.
NOT_ONLY_CANDIDATE = "the answer names actions that are not candidates; name exactly one candidate"

#: Episodic memory (002 §4.1.1: "a list of previous actions selected by the agent").
MEMORY_HEADER = "Your previous decisions (most recent last):"
MEMORY_LINE = "- decision {n}: {action}"
MEMORY_SAID = ' (said: "{message}")'
MEMORY_INVALID = " (your answer was invalid: {feedback}; {action} was played for you)"
#: Reward wording: one's own reward, or the team's in fully cooperative games.
REWARD_OWN = "you received a reward of {reward}"
REWARD_TEAM = "your team received a reward of {reward}"

#: CoT (004 Fig. 6; Wei et al.): reason, then answer in the template.
COT_INSTRUCTION = (
    "Let's think step by step: consider the rules, what has happened so far and what the other "
    "players are likely to do, then choose your action."
)
#: The same, where the prompt shows a payoff table (004's matrix games, unless the payoffs are
#: ablated away): only there does it speak of payoffs.
COT_INSTRUCTION_PAYOFFS = (
    "Let's think step by step: consider the rules and payoffs, what has happened so far and what "
    "the other players are likely to do, then choose your action."
)
COT_FIELD = "your step-by-step reasoning, in a few sentences"
#: 002's answer field (App. A.1, C.1: "Explanation: <brief explanation for selecting the move>").
EXPLANATION_FIELD = "brief explanation for selecting the move"

# ----------------------------------------------------------------------------- 000 belief state
#: 000 App. A.2, generalised.
BELIEF_INITIAL = (
    "Below is your current belief about game state based on your previous observations about "
    "the environment and interactions with your teammates.\n{observation}"
)
#: 000 §4.2 / multi_LLM_comm code: rewrite the belief after every observation.
BELIEF_UPDATE = (
    "Your previous belief about the game state:\n{belief}\n\n"
    "What happened since: {last}\n\nYour new observation:\n{observation}\n\n"
    "Please update your belief state based on the new observation. Keep track of the key task "
    "information: the state of the game, what you know, what the other players know, have done "
    "and intend. Return your answer beginning with: 'Below is your current belief'."
)
BELIEF_PREFIX = "Below is your current belief"
BELIEF_ACTION = "Given the above belief state, what is your next action?"

# ----------------------------------------------------------------------------- 002 ToM + verify
#: 002 App. C.2, generalised from Hanabi.
TOM_REASONING = (
    "You are a Theory of Mind inference agent for our game. You will be provided with my "
    "partner's selected action and my latest state information after my partner took their "
    "action. You will provide me with two things: 1. An explanation for my partner's previous "
    "action along with their intention and implicit communication. 2. What my partner needs "
    "from me next, based on their knowledge.\n"
    "Format your response as:\n"
    "Partner Action Explanation: <1 sentence explanation of partner action>\n"
    "Suggestion: <what I should do or tell my partner, based on their knowledge>"
)
#: 002 App. C.3.
VERIFICATION = (
    "You are an action verification agent for games. I will provide you with an action and you "
    "need to check whether the action satisfies the criteria:\n"
    "1. Rule Following: It follows the rules of the game.\n"
    "2. Safety: It won't lead to the game ending immediately or to a clear loss.\n"
    "Think about the action and the current state of the game. End your response with "
    '"Verification: Okay" if the selected action follows ***both*** criteria and '
    '"Verification: Not Okay" otherwise. Restrict your response to 4-5 sentences.'
)
VERIFY_QUESTION = "Selected action: {action}"
#: 002's authors: the verifier's critique, back in the generator's conversation.
VERIFY_REJECTED = (
    "Your selected action: {action} is not appropriate. {critique}\n"
    "Please choose another action. List of Available Actions:\n{actions}"
)

# ----------------------------------------------------------------------------- 003 CoBlock
#: 003 §3 step 2 with the output template of App. B.2.
PARTNER_MODELLING = (
    "Model your partner's state from the dialogue and action history: predict their intent and "
    "state, including their goal, their resources, their immediate next plan and whether that "
    "plan has been executed. Then model your own state the same way.\n"
    "Format your response as:\n"
    "# Partner Modelling\n# Long-term goal: ...\n# Short-term goal: ...\n"
    "# Partner resources: ...\n# Explanation: ...\n"
    "# Self Modelling\n# Long-term goal: ...\n# Short-term goal: ...\n"
    "# My resources: ...\n# Explanation: ..."
)
#: 003 §3 step 3 (self-reflection, Fu et al.) and the three strategy dimensions (Hovland et al.).
SELF_REFLECTION = (
    "Reflect on your past actions and the dialogue. Compare what has been achieved so far with "
    "your goal and note any mistakes; the game's feedback on your recent actions is: {feedback}\n"
    "Then adjust your collaboration strategy along three dimensions: team role (whether to take "
    "the lead and assign tasks to your partner), altruism/egoism balance (whether to pursue your "
    "own goal or assist your partner) and persuasion strategy (whether to be more proactive and "
    "persuasive in communication). Answer in 3-5 sentences."
)

#: 003 §3's one-generation chain of thought (steps as answer fields; the action is the last).
STEPS_INSTRUCTION = (
    "Think in steps before you act, as the examples do: {steps}; {last}) choose your action."
)
STEP_NAMES = {
    "world_state": "understand the world state",
    "partner_modelling": "model your partner's state and your own",
    "reflection": "reflect on your past actions and the dialogue",
}
#: Step 1: the XML world state in natural language (the paper's "understanding the world state").
WORLD_STATE_FIELD = (
    "step 1: the world state in your own words: what is built, what your goal still needs and "
    "what you have"
)
#: Step 2 as an answer field, in App. B.2's output template.
PARTNER_FIELD = (
    "step 2: '# Partner Modelling # Long-term goal: ... # Short-term goal: ... # Partner "
    "resources: ... # Explanation: ... # Self Modelling # Long-term goal: ... # Short-term goal: "
    "... # My resources: ... # Explanation: ...'"
)
#: Step 3 as an answer field (self-reflection; the three strategy dimensions).
REFLECTION_FIELD = (
    "step 3: compare what is built with your goal and note any mistake in your actions or the "
    "dialogue; then adjust your team role, altruism/egoism balance and persuasion"
)

# ----------------------------------------------------------------------------- 001 ToM planning
#: 001 §3.3, first order: behaviour patterns of every other player, then merged plan + evaluation.
TOM_PLANNING_1 = (
    "Analyse the behavioural patterns of every other player from the game history and the "
    "current observation: for each player, infer what they may hold or intend, their strategy, "
    "and predict their next action. Answer in a few sentences per player."
)
#: 001 §3.3, second order: what the others believe about my intentions.
TOM_PLANNING_2 = (
    TOM_PLANNING_1
    + " Then reason one level deeper (second-order Theory of Mind): what does each player "
    "believe about your own hand and intentions, and how will they react to each of your "
    "possible actions?"
)
TOM_PLANNING_FIELD = (
    "evaluate each candidate action against your predictions of the other players, then name "
    "the best one"
)
TOM_ANALYSIS_TITLE = "Theory of Mind analysis (order {order}):"
#: 001 §3.2: the action recommender's shortlist.
TOP_K_SECTION = (
    "Recommended candidate actions (top {k} of {n} by the action recommender, best first):"
)

# ----------------------------------------------------------------------------- 004 strategies
#: Plans + Insights (004 Fig. 8, Fish et al.): generated each step, fed back the next.
PLANS_FIELD = "your plan for the next rounds"
INSIGHTS_FIELD = "insights you have gained about the game and the other players"
PLANS_SECTION = "Your plan from your previous decision: {plans}\nYour insights so far: {insights}"

#: Reflexion's reflection module (004 Fig. 10, Shinn et al.).
REFLEXION_REFLECT = (
    "You are playing a repeated game. In your last decision you chose {action} and then "
    "{reward_text}.\nYour previous reflections:\n{reflections}\n\n"
    "Reflect on this outcome: what worked, what did not, and what the other players seem to be "
    "doing. Then write a short plan for the coming rounds. Answer in 2-4 sentences."
)
REFLEXION_SECTION = "Your reflections from earlier rounds (most recent last):"

#: System 2 Attention (004 Figs. 16-17, Weston & Sukhbaatar): rewrite rules + history.
S2A = (
    "Given the description of the game above and its history, extract the parts that are "
    "relevant and unbiased for deciding the next action, and rewrite them concisely: keep the "
    "payoffs or rules that matter and what each player has done, drop everything else. Do not "
    "add opinions or advice. Rewritten context:"
)

#: Literal ToM questions (004 Figs. 5, 7): predict the partner's action this round.
PREDICT_QUESTION = (
    "Q: Which action do you predict the other player will choose in this round? Answer with "
    "one of: {options}."
)
PREDICT_AFTER_OWN = "You have chosen {action} for this round."
#: LM literal ToM stem (004 Figs. 2-3): completed by each of the partner's actions.
LM_PREDICT_STEM = "Q: Which action will the other player choose in this round?\nA:"

#: Social prompting (004 Fig. 18, Akata et al.): act given one's own prediction.
SOCIAL_PREDICTION = (
    "I predict that the other player will choose {prediction} in this round. Given this "
    "prediction, choose your best action."
)
#: Oracle prompting (004 Figs. 14-15): the partner's true next action.
ORACLE = "The other player will choose {action} in this round."
ORACLE_MAX = (
    "The other player will choose {action} in this round. Choose the action that maximizes "
    "your own points given the other player's choice."
)

# ----------------------------------------------------------------------------- probes
#: ToM probes (000 App. C questions, or any game's), asked after the observation.
PROBE_QUESTIONS = "Answer these questions about the game from your point of view:"
