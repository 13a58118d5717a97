import { PageHeader } from '../components/ui';

export function Knowledge() {
  return <PageHeader title="Knowledge" />;
}
