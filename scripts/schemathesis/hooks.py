"""Schemathesis hooks (SCHEMATHESIS_HOOKS=hooks): bodies of the media types it cannot make itself.

A raw mail for POST /api/v1/inbound/mail: replies as mail programs write them, and bytes that are
no mail at all. Its signature never holds, so the server must answer 401 to every one of them.
"""
import schemathesis
from hypothesis import strategies as st

REPLY = (
    "From: Ada <ada@example.org>\r\n"
    "To: abc@play.kuryr.test\r\n"
    "Subject: Re: your move\r\n"
    "Message-ID: <{id}@mail.example.org>\r\n"
    "\r\n"
    "{line}\r\n"
    "\r\n"
    "On Sat, 28 Nov 2026, Kuryr wrote:\r\n"
    "> It is your move.\r\n"
)

replies = st.builds(
    lambda id, line: REPLY.format(id=id, line=line).encode(),
    st.integers(min_value=0, max_value=10**9),
    st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), max_size=40),
)

schemathesis.openapi.media_type("message/rfc822", replies | st.binary(max_size=4096))
