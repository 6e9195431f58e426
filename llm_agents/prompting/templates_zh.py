"""Chinese scaffolding for games played in Chinese (paper 001's main setting: Guandan, ``language=zh``).

Every template of :mod:`tom_llm_agents.prompting.templates` that the agent writes around the game's own
text, in Chinese, with the same ``str.format`` fields; so a Chinese game text is never wrapped in
English instructions. The JSON keys of constrained decoding stay ASCII (``"reasoning"``,
``"action"``: they are identifiers, not prose); the plain-text labels are Chinese
(``推理：…`` / ``动作：…``) and the reply reader accepts both.

The agent picks this module when the game's rules text is mostly Chinese (or ``language=zh``).
"""

from __future__ import annotations

from tom_llm_agents.prompting.templates import *  # noqa: F403 - the English defaults, overridden below

LANGUAGE = "zh"
AGENT_ROLE = "在每个时间步，我会向你提供游戏的相关信息和合法动作；请帮我选择最好的下一步动作。"
GAME_ROLE = "你正在和用户玩一个文字游戏。"
LEGAL_HEADER = "合法动作："
QA_QUESTION = "问：你选择哪个动作？"
JSON_FORMAT = "请用一个 JSON 对象回答，包含 {keys}。“action” 必须与上面列出的某个合法动作完全一致。"
JSON_FIELD = "“{name}”：{description}"
MESSAGE_FIELD = "随动作发送给队友的一条简短消息（可以为空）"
TEXT_FORMAT = "请按以下格式回答：\n{lines}动作：<一个合法动作>\n不要输出其他内容。"
ACTION_SLOT = "<一个合法动作>"
ACTION_SLOT_NO_MENU = "<按规则写出的动作>"
TOOL_OFFER = "如需先查看合法动作列表，请只回复一个词：LIST。"
REPROMPT_NO_MENU = "你的回答无法使用：{feedback}\n请按要求的格式重新回答，按规则写出一个动作。"
LABELS = {
    "reasoning": "推理",
    "evaluation": "评估",
    "plans": "计划",
    "insights": "见解",
    "analysis": "分析",
    "explanation": "解释",
}
FIELD_LINE = "{label}：<{text}>"
ACTION_LABEL = "动作"
MESSAGE_LABEL = "消息"
MESSAGE_LINE = "消息：“<{description}>”"
EXAMPLES_HEADER = "以下是好的回答示例（情境为简写）："
REPROMPT = (
    "你的回答无法使用：{feedback}\n请按要求的格式重新回答，从以下动作中严格选择一个：{actions}。"
)
NOT_CANDIDATE = "{action} 不是当前的候选动作之一"
NOT_ONLY_CANDIDATE = "回答提到了不在候选中的动作；请只说出一个候选动作"
MEMORY_HEADER = "你之前的决策（最近的在最后）："
MEMORY_LINE = "- 第 {n} 次决策：{action}"
MEMORY_SAID = "（说：“{message}”）"
MEMORY_INVALID = "（你的回答无效：{feedback}；系统替你执行了 {action}）"
REWARD_OWN = "你获得了 {reward} 的奖励"
REWARD_TEAM = "你的队伍获得了 {reward} 的奖励"
COT_INSTRUCTION = (
    "让我们一步一步地思考：考虑规则、到目前为止发生的事情以及其他玩家可能的行动，然后选择你的动作。"
)
COT_INSTRUCTION_PAYOFFS = "让我们一步一步地思考：考虑规则和收益、到目前为止发生的事情以及其他玩家可能的行动，然后选择你的动作。"
COT_FIELD = "你的逐步推理，写几句话"
EXPLANATION_FIELD = "选择该动作的简短解释"
TOM_PLANNING_1 = (
    "根据游戏历史和当前观察，分析每一位其他玩家的行为模式：推断他们可能持有的牌或意图、他们的策略，"
    "并预测他们的下一步动作。每位玩家用几句话回答。"
)
TOM_PLANNING_2 = (
    TOM_PLANNING_1
    + "然后再深入一层（二阶心智理论）：每位玩家认为你的手牌和意图是什么，他们会如何回应你每一个可能的动作？"
)
TOM_PLANNING_FIELD = "根据你对其他玩家的预测评估每个候选动作，然后说出最好的一个"
TOM_ANALYSIS_TITLE = "心智理论分析（{order}阶）："
TOP_K_SECTION = "推荐的候选动作（动作推荐器给出的 {n} 个中的前 {k} 个，最好的在前）："
PROBE_QUESTIONS = "请从你的角度回答以下关于游戏的问题："
VERIFICATION = (
    "你是一个游戏动作验证助手。我会给你一个动作，你需要检查它是否满足以下标准：\n"
    "1. 遵守规则：它符合游戏规则。\n"
    "2. 安全：它不会导致游戏立即结束或明显失败。\n"
    "思考这个动作和当前的游戏状态。如果所选动作***同时***满足两个标准，请以"
    "“Verification: Okay”结束回答，否则以“Verification: Not Okay”结束。回答限制在 4-5 句话。"
)
VERIFY_QUESTION = "所选动作：{action}"
VERIFY_REJECTED = (
    "你选择的动作：{action} 不合适。{critique}\n请选择另一个动作。可选动作列表：\n{actions}"
)
