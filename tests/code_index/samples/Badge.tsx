import React from "react";

type BadgeProps = { label: string; tone: "info" | "warning" | "danger"; onDismiss?: () => void };

export function Badge({ label, tone, onDismiss }: BadgeProps) {
  const className = `badge badge-${tone}`;
  return (
    <span className={className} role="status">
      {label}
      {onDismiss && <button aria-label="dismiss" onClick={onDismiss}>x</button>}
    </span>
  );
}
