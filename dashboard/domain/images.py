"""Images with their tags, merged the way ``kubectl argo rollouts get`` lists them.

Non-goals: parsing image references.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ImageView:
    image: str
    tags: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"image": self.image, "tags": list(self.tags)}

    def label(self) -> str:
        """ "img (tag1, tag2)" or just "img"."""
        return f"{self.image} ({', '.join(self.tags)})" if self.tags else self.image


def merge_image(images: list[ImageView], image: str, tags: list[str]) -> list[ImageView]:
    """``mergeImageAndTags``: a new image keeps its tags in order; a repeat gets the sorted union.

    The result is sorted by image name, as upstream re-sorts after every merge.
    """
    merged = list(images)
    for i, existing in enumerate(merged):
        if existing.image == image:
            merged[i] = ImageView(image, tuple(sorted(set(existing.tags) | set(tags))))
            break
    else:
        merged.append(ImageView(image, tuple(tags)))
    merged.sort(key=lambda view: view.image)
    return merged
