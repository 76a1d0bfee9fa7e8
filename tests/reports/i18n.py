"""Sample contracts whose names are written in other scripts (for the font tests)."""

from __future__ import annotations

from tests.contracts import small_contract

# language tag -> (provider, customer, title, exclusion definition)
SAMPLES = {
    "zh": ("某某智算云科技有限公司", "北京深度学习研究院", "GPU 集群服务等级协议", "计划内维护，提前七天通知。"),
    "ja": ("東京クラウド株式会社", "大阪機械学習研究所", "GPUクラスタ・サービスレベル契約", "事前に通知された計画保守。"),
    "pl": ("Łódź Obliczenia Sp. z o.o.", "Politechnika Gdańska", "Umowa o poziomie usług — Źródło mocy",
           "Zaplanowana konserwacja, zgłoszona z wyprzedzeniem."),
    "cs": ("Příbram Výpočty s.r.o.", "Vysoké učení technické v Brně", "Smlouva o úrovni služeb — Řízení výkonu",
           "Plánovaná údržba oznámená předem."),
    "de": ("Rechenzentrum Süd GmbH", "Universität Düsseldorf", "Dienstgütevereinbarung Großrechner Straße",
           "Geplante Wartung mit Vorankündigung."),
    "ru": ("ООО «Вычислительный центр Москва»", "Новосибирский государственный университет",
           "Соглашение об уровне услуг", "Плановое обслуживание с уведомлением."),
}


def sample_yaml(lang: str) -> str:
    provider, customer, title, definition = SAMPLES[lang]
    text = small_contract(f"sample-{lang}", {"r1": "n[01-04]"}, extra=(
        "exclusions:\n"
        "  maintenance:\n"
        f"    definition: \"{definition}\"\n"
        "    notice: 7d\n"))
    head = f"contract: {{id: sample-{lang}, provider: P, customer: C, timezone: UTC, currency: USD}}\n"
    info = (f"contract: {{id: sample-{lang}, title: \"{title}\", provider: \"{provider}\", customer: \"{customer}\", "
            f"language: {lang}, timezone: UTC, currency: USD}}\n")
    assert head in text
    return text.replace(head, info)


def sample_texts(lang: str) -> tuple[str, ...]:
    return SAMPLES[lang]
